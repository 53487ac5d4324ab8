/**
 * Walks the simulator's hosted onboarding page (simulator/README.md, "Onboarding") over HTTP, as a
 * browser without scripts would: opens the Account Link, then submits the page's form. Answers
 * where the page finally sent the browser (the link's return URL once nothing is left to give).
 */
export async function completeHostedOnboarding(url: string, values: 'verified' | 'failing'): Promise<string> {
  throw new Error(`the simulator's hosted onboarding page is not served yet (${url}, ${values})`);
}
