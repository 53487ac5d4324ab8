import type { Command } from 'commander';
import { ioOf } from '../io.js';
import type { ServiceOptions } from './agent-service.js';


export function registerAgentCommands(program: Command): void {
  const agent = program
    .command('agent')
    .description('Run the on-premise agent beside the card readers: presence, reader state, a local websocket for the counter')
    .option('--server <url>', 'the pos server (env POS_SERVER_URL)')
    .option('--api-key <key>', "the shop's restricted counter key rk_… (pos keys create --preset counter) or its secret key (env POS_API_KEY)")
    .option('--data-dir <dir>', 'agent state: id, reader registry, queued reports (env POS_AGENT_DATA_DIR, default ./.pos-agent)')
    .option('--listen <host:port>', 'the local websocket (env POS_AGENT_LISTEN, default 127.0.0.1:4848)')
    .option('--token <token>', 'required in hello by counters; needed for a non-loopback --listen (env POS_AGENT_TOKEN)')
    .option('--heartbeat-ms <ms>', 'heartbeat interval (env POS_AGENT_HEARTBEAT_MS, default 5000)')
    .option('--simulate <n>', 'follow N simulated readers, registered once and remembered (test keys only)')
    .option('--printer <path|usb:VID:PID|tcp:HOST:PORT>', 'an ESC/POS receipt printer (its cash drawer hangs off it): serial path, USB serial adapter or network printer, e.g. tcp:192.168.1.50:9100 (env POS_AGENT_PRINTER)')
    .option('--printer-columns <n>', 'characters per line: 32 (58 mm paper), 42 or 48 (80 mm); default 42 (env POS_AGENT_PRINTER_COLUMNS)')
    .option('--printer-codepage <name>', 'the printer code page: cp858 (default, with €), cp437, cp1252, … (env POS_AGENT_PRINTER_CODEPAGE)')
    .option('--receipts <policy>', 'print the customer receipt on approval: always (default), ask (the counter asks for it) or never (env POS_AGENT_RECEIPTS)')
    .option('--display <path|usb:VID:PID>', 'an ESC/POS customer display (2×20 VFD) (env POS_AGENT_DISPLAY)')
    .option('--display-idle <text>', "the display's idle message, up to 20 characters (default the shop's name)")
    .option('--device-baud <rate>', 'serial baud rate of the printer and display (default 9600)')
    .option('--no-processor-readers', "don't follow the processor readers at the merchant's locations")
    .option('--name <name>', 'how the server lists this agent (default the host name)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env POS_LOG_LEVEL)')
    .addHelpText(
      'after',
      '\nExamples:\n  pos agent --server http://127.0.0.1:4242 --api-key rk_test_… --simulate 2\n  pos agent --listen 0.0.0.0:4848 --token "$(openssl rand -hex 16)" --printer usb:04b8:0e15 --display /dev/ttyUSB1\n  pos agent --printer tcp:192.168.1.50:9100 --printer-columns 48\n\nProtocol: docs/agent-protocol.md; printer, drawer and display: docs/counter-hardware.md',
    )
    .action(async (_options: unknown, command: Command) => {
      const { runAgent } = await import('./agent-action.js');
      // --server, --api-key and --log-level are also program-wide options: read them with the globals.
      await runAgent(command.optsWithGlobals(), ioOf(command));
    });
  agent
    .command('install-service')
    .description('Write a systemd unit (and an environment file holding the key) for a shop PC; does not start it')
    .option('--server <url>', 'the pos server (env POS_SERVER_URL)')
    .option('--api-key <key>', "the shop's secret key, used to make a restricted counter key that is written instead (or an rk_ key, written as it is) (env POS_API_KEY)")
    .option('--data-dir <dir>', 'agent state directory (default /var/lib/pos-agent)')
    .option('--listen <host:port>', 'the local websocket (default 127.0.0.1:4848)')
    .option('--token <token>', 'local websocket token (needed for a non-loopback --listen)')
    .option('--simulate <n>', 'simulated readers')
    .option('--printer <path|usb:VID:PID|tcp:HOST:PORT>', 'an ESC/POS receipt printer')
    .option('--display <path|usb:VID:PID>', 'an ESC/POS customer display')
    .option('--user <user>', 'an existing system user to run as (default: a user systemd makes for the service, DynamicUser=; in group dialout for serial printers and displays either way)')
    .option('--unit-dir <dir>', 'where the unit is written', '/etc/systemd/system')
    // Not --env-file: Node 20 takes that flag for itself wherever it appears and exits 9.
    .option('--secrets-file <path>', 'where the key is written (mode 0600, read by systemd as root)', '/etc/pos-agent/agent.env')
    .option('--print', 'print the unit and environment file instead of writing them')
    .addHelpText('after', '\nThen: sudo systemctl daemon-reload && sudo systemctl enable --now pos-agent (see docs/agent.md)')
    .action(async (_options: unknown, command: Command) => {
      const { installService } = await import('./agent-service.js');
      // Options of the same name as `pos agent`'s are parsed by it: read both levels.
      await installService(command.optsWithGlobals<ServiceOptions>(), ioOf(command));
    });
}
