/**
 * Launcher for the ahpx project's test mock host (bench tooling of ahp-fuzz).
 *
 * Usage: launch-mock.ts SCENARIO [CHECKOUT]
 *   SCENARIO  echo | toolcall | none   (the mock's scenario helpers; none = no scenario)
 *   CHECKOUT  a checkout of TylerLeonhardt/ahpx (default: $AHPX_CHECKOUT, else
 *             /work/wild/TylerLeonhardt+ahpx)
 *
 * Prints one line, ws://127.0.0.1:PORT, and serves until SIGTERM/SIGINT.
 *
 * Two things are done around the mock without editing the checkout:
 *  - the bind is pinned to loopback: the mock asks for a server on port 0 with no host,
 *    which listens on every interface; net.Server.prototype.listen is wrapped so a listen
 *    without a host gets 127.0.0.1;
 *  - module resolution: the checkout has no node_modules, and ESM ignores NODE_PATH, so the
 *    mock's source file is copied (at run time, as .mts so it loads as ESM, into a temporary
 *    directory removed once it is loaded) next to a symlink to this directory's node_modules, and imported from there.
 */
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const LOOPBACK = "127.0.0.1";
const MOCK_PATH = "src/__tests__/helpers/mock-server.ts";

type Listen = (this: net.Server, ...args: unknown[]) => net.Server;

function pinListenToLoopback(): void {
	const original = net.Server.prototype.listen as unknown as Listen;
	const pinned: Listen = function (this: net.Server, ...args: unknown[]): net.Server {
		const first = args[0];
		if (first !== null && typeof first === "object") {
			const options = first as { host?: string; path?: string };
			if (options.host === undefined && options.path === undefined) {
				args[0] = { ...options, host: LOOPBACK };
			}
		} else if (first === undefined || typeof first === "number" || /^\d+$/.test(String(first))) {
			const second = args[1];
			if (second === undefined || second === null) {
				args[1] = LOOPBACK;
			} else if (typeof second === "function") {
				args.splice(1, 0, LOOPBACK);
			}
		}
		return original.apply(this, args);
	};
	net.Server.prototype.listen = pinned as unknown as typeof net.Server.prototype.listen;
}

function usage(message: string): never {
	process.stderr.write(`launch-mock: ${message}\nusage: launch-mock.ts echo|toolcall|none [AHPX_CHECKOUT]\n`);
	process.exit(2);
}

const scenarioName = process.argv[2];
if (scenarioName !== "echo" && scenarioName !== "toolcall" && scenarioName !== "none") {
	usage(`unknown scenario ${JSON.stringify(scenarioName ?? "")}`);
}
const checkout = resolve(process.argv[3] ?? process.env.AHPX_CHECKOUT ?? "/work/wild/TylerLeonhardt+ahpx");
const here = dirname(fileURLToPath(import.meta.url));

const work = mkdtempSync(join(tmpdir(), "ahpx-mock-"));
const cleanup = (): void => rmSync(work, { recursive: true, force: true });
let mockFile: string;
try {
	mockFile = join(work, "mock-server.mts");
	copyFileSync(join(checkout, MOCK_PATH), mockFile);
	symlinkSync(join(here, "node_modules"), join(work, "node_modules"), "dir");
} catch (err) {
	cleanup();
	usage(`cannot prepare the mock from ${checkout}: ${err instanceof Error ? err.message : String(err)}`);
}

interface MockModule {
	createMockServer(scenario?: unknown): Promise<{ wss: { address(): unknown }; close(): Promise<void> }>;
	echoScenario(): unknown;
	toolCallScenario(): unknown;
}

pinListenToLoopback();
let mock: MockModule;
try {
	mock = (await import(pathToFileURL(mockFile).href)) as MockModule;
} finally {
	// Loaded (or failed): the temporary directory is not needed any more (ws is resolved).
	cleanup();
}

const scenario =
	scenarioName === "echo" ? mock.echoScenario() : scenarioName === "toolcall" ? mock.toolCallScenario() : {};
const server = await mock.createMockServer(scenario);
const address = server.wss.address() as { address: string; port: number };
process.stdout.write(`ws://${address.address}:${address.port}\n`);

let closing = false;
const stop = (): void => {
	if (closing) return;
	closing = true;
	server.close().then(
		() => process.exit(0),
		() => process.exit(0),
	);
	setTimeout(() => process.exit(0), 2000).unref();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
