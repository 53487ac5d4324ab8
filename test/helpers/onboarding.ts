/**
 * Stripe's test values for what the hosted onboarding page asks of a US individual
 * (simulator/README.md, "Onboarding"): they verify, except the failing address below.
 */
const TEST_ANSWERS: Record<string, string> = {
  'individual[first_name]': 'Jenny',
  'individual[last_name]': 'Rosen',
  'individual[email]': 'jenny.rosen@example.com',
  'individual[phone]': '0000000000',
  'individual[dob][day]': '1',
  'individual[dob][month]': '1',
  'individual[dob][year]': '1902',
  'individual[address][line1]': 'address_full_match',
  'individual[address][city]': 'San Francisco',
  'individual[address][state]': 'CA',
  'individual[address][postal_code]': '94103',
  'individual[ssn_last_4]': '0000',
  'individual[id_number]': '000000000',
  'business_profile[mcc]': '5734',
  'business_profile[url]': 'https://accessible.stripe.com',
  'external_account[routing_number]': '110000000',
  'external_account[account_number]': '000123456789',
};

function decode(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The page's one form: where it posts and the inputs it has, as a browser without scripts sees them. */
function formOf(html: string, pageUrl: string): { action: string; inputs: { name: string; value: string; type: string }[] } {
  const form = /<form method="post" action="([^"]+)">/.exec(html);
  if (!form?.[1]) throw new Error(`the onboarding page has no form:\n${html.slice(0, 2_000)}`);
  const inputs = [...html.matchAll(/<input ([^>]*)>/g)].map((m) => {
    const attr = (name: string) => decode(new RegExp(`${name}="([^"]*)"`).exec(m[1] ?? '')?.[1] ?? '');
    return { name: attr('name'), value: attr('value'), type: attr('type') || 'text' };
  });
  return { action: new URL(decode(form[1]), pageUrl).toString(), inputs: inputs.filter((i) => i.name !== '') };
}

/** The page asks in steps (business type and terms, then the person); a handful is plenty. */
const MAX_STEPS = 5;

/**
 * Walks the simulator's hosted onboarding page over HTTP, as a browser would: opens the Account
 * Link, then submits its form until the page lets go. `verified` presses the page's "Use test data
 * (verifies)" button; `failing` types Stripe's test values with the address that fails
 * verification (`address_no_match`) and accepts the terms. Answers where the page sent the browser
 * (the link's return URL once nothing is left to give).
 */
export async function completeHostedOnboarding(url: string, values: 'verified' | 'failing'): Promise<string> {
  const opened = await fetch(url, { redirect: 'manual' });
  let html = await opened.text();
  if (opened.status !== 200) throw new Error(`the Account Link answered ${opened.status}: ${html.slice(0, 500)}`);
  for (let step = 0; step < MAX_STEPS; step += 1) {
    const form = formOf(html, url);
    const body = new URLSearchParams();
    for (const input of form.inputs) {
      if (input.type === 'hidden') body.set(input.name, input.value);
      else if (input.type === 'checkbox') {
        if (values === 'failing') body.set(input.name, input.value);
      } else if (values === 'failing') body.set(input.name, input.name === 'individual[address][line1]' ? 'address_no_match' : (TEST_ANSWERS[input.name] ?? input.value));
    }
    if (html.includes('name="business_type"')) body.set('business_type', 'individual');
    body.set('action', values === 'verified' ? 'test_data' : 'submit');
    const submitted = await fetch(form.action, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    if (submitted.status >= 300 && submitted.status < 400) return submitted.headers.get('location') ?? '';
    html = await submitted.text();
    if (submitted.status !== 200) throw new Error(`the onboarding form answered ${submitted.status}: ${html.slice(0, 1_000)}`);
  }
  throw new Error(`the onboarding page still asks after ${MAX_STEPS} submissions:\n${html.slice(0, 2_000)}`);
}
