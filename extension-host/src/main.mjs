// Tandem's Node extension host: runs pi's TypeScript/JavaScript extensions and speaks Tandem's
// extension protocol (protocol-ext/EXTENSIONS.md) with it.
//
// Start: `node main.mjs` with TANDEM_EXTENSION_OUTPUT_FD=<fd> (protocol lines go there; stdout is
// then only log output) or without it (protocol lines on stdout). Requests come on stdin.

import { Console } from "node:console";
import { Host } from "./host.mjs";
import { Connection } from "./protocol.mjs";

// Extensions' console output is log output: it goes to stderr, never onto the protocol.
const logConsole = new Console({ stdout: process.stderr, stderr: process.stderr });
for (const key of Object.keys(console)) {
	if (typeof console[key] === "function" && typeof logConsole[key] === "function") console[key] = logConsole[key].bind(logConsole);
}

const fdText = process.env.TANDEM_EXTENSION_OUTPUT_FD;
let connection;
if (fdText !== undefined && fdText !== "") {
	const fd = Number(fdText);
	if (!Number.isInteger(fd) || fd < 0) {
		process.stderr.write(`extension host: TANDEM_EXTENSION_OUTPUT_FD must be a file descriptor number, got "${fdText}"\n`);
		process.exit(2);
	}
	connection = new Connection({ outputFd: fd, input: process.stdin });
} else {
	// The protocol owns stdout: keep its writer, and send everything else written there to stderr.
	const protocolWrite = process.stdout.write.bind(process.stdout);
	process.stdout.write = (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback);
	connection = new Connection({ write: (text) => protocolWrite(text), input: process.stdin });
}

process.on("uncaughtException", (error) => {
	process.stderr.write(`extension host: uncaught exception: ${error?.stack ?? error}\n`);
});
process.on("unhandledRejection", (reason) => {
	process.stderr.write(`extension host: unhandled rejection: ${reason?.stack ?? reason}\n`);
});

new Host(connection);
connection.start();
