// Running commands for extensions: `pi.exec()` (no shell) and the local shell backend behind the
// built-in `bash` tool stand-in and `createLocalBashOperations()`.

import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants as fsConstants, existsSync } from "node:fs";
import { constants as bufferConstants } from "node:buffer";
import { constants as osConstants } from "node:os";
import { delimiter, join } from "node:path";
import { StringDecoder } from "node:string_decoder";

const DEFAULT_MAX_BUFFER = Math.min(256 * 1024 * 1024, bufferConstants.MAX_STRING_LENGTH);
const FORCE_KILL_AFTER_MS = 5000;
/** How long to wait for stdout/stderr to close after the child exited (descendants may hold them). */
const CLOSE_GRACE_MS = 200;

/** The exit code of a finished child, or undefined if it has not exited. Signals count as 128 + n. */
function exitCodeOf(child, code) {
	if (typeof code === "number") return code;
	const signal = child.signalCode;
	if (signal) return 128 + (osConstants.signals[signal] ?? 0);
	return undefined;
}

/**
 * Resolves with the child's exit code once it exited and its pipes closed, or shortly after it
 * exited when a detached descendant keeps the pipes open. Rejects on a spawn error.
 */
export function waitForChild(child) {
	return new Promise((resolve, reject) => {
		let exited = false;
		let exitCode;
		let graceTimer;
		const finish = () => {
			clearTimeout(graceTimer);
			resolve(exitCode);
		};
		child.once("error", (error) => {
			clearTimeout(graceTimer);
			reject(error);
		});
		child.once("exit", (code) => {
			exited = true;
			exitCode = exitCodeOf(child, code);
			graceTimer = setTimeout(() => {
				child.stdout?.destroy();
				child.stderr?.destroy();
				finish();
			}, CLOSE_GRACE_MS);
		});
		child.once("close", (code) => {
			if (!exited) exitCode = exitCodeOf(child, code);
			finish();
		});
	});
}

/** `pi.exec(command, args, options)`: runs without a shell; see pi's docs for the result fields. */
export async function execCommand(command, args = [], cwd, options = {}) {
	const maxBuffer = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
	if (!Number.isInteger(maxBuffer) || maxBuffer < 0 || maxBuffer > bufferConstants.MAX_STRING_LENGTH) {
		throw new RangeError(`maxBuffer must be an integer between 0 and ${bufferConstants.MAX_STRING_LENGTH} bytes`);
	}
	const child = spawn(command, args, { cwd, shell: false, stdio: ["ignore", "pipe", "pipe"] });
	const out = new StringDecoder("utf8");
	const err = new StringDecoder("utf8");
	let stdout = "";
	let stderr = "";
	let bytes = 0;
	let truncated = false;
	let killed = false;
	let forceKill;
	const terminate = () => {
		if (killed) return;
		killed = true;
		child.kill("SIGTERM");
		forceKill = setTimeout(() => {
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
		}, FORCE_KILL_AFTER_MS);
	};
	const signal = options.signal;
	if (signal?.aborted) terminate();
	else signal?.addEventListener("abort", terminate, { once: true });
	const timer = options.timeout > 0 ? setTimeout(terminate, options.timeout) : undefined;
	const take = (chunk) => {
		if (truncated) return undefined;
		const room = maxBuffer - bytes;
		if (chunk.length <= room) {
			bytes += chunk.length;
			return chunk;
		}
		truncated = true;
		child.stdout?.destroy();
		child.stderr?.destroy();
		terminate();
		return room > 0 ? chunk.subarray(0, room) : undefined;
	};
	child.stdout.on("data", (chunk) => {
		const kept = take(chunk);
		if (kept) stdout += out.write(kept);
	});
	child.stderr.on("data", (chunk) => {
		const kept = take(chunk);
		if (kept) stderr += err.write(kept);
	});
	let code;
	try {
		code = await waitForChild(child);
	} catch (error) {
		code = 1;
		if (!stderr) stderr = error instanceof Error ? error.message : String(error);
	} finally {
		clearTimeout(timer);
		clearTimeout(forceKill);
		signal?.removeEventListener("abort", terminate);
	}
	if (!truncated) {
		stdout += out.end();
		stderr += err.end();
	}
	const exit = code ?? 1;
	return { stdout, stderr, code: truncated && exit === 0 ? 1 : exit, killed, truncated };
}

function onPath(name) {
	for (const dir of (process.env.PATH ?? "").split(delimiter)) {
		if (!dir) continue;
		const candidate = join(dir, name);
		try {
			accessSync(candidate, fsConstants.X_OK);
			return candidate;
		} catch {}
	}
	return undefined;
}

/** The shell to run commands with: `shellPath`, else bash, else sh. */
export function getShellConfig(shellPath) {
	if (process.platform === "win32") {
		return { shell: shellPath ?? process.env.ComSpec ?? "cmd.exe", args: ["/d", "/s", "/c"], commandTransport: "args" };
	}
	const shell = shellPath ?? (existsSync("/bin/bash") ? "/bin/bash" : onPath("bash")) ?? "/bin/sh";
	return { shell, args: ["-c"], commandTransport: "args" };
}

export function getShellEnv() {
	return { ...process.env };
}

/** Kills a detached child and everything in its process group. */
export function killProcessTree(pid) {
	if (process.platform === "win32") {
		try {
			spawnSync("taskkill", ["/pid", String(pid), "/t", "/f"], { stdio: "ignore" });
		} catch {}
		return;
	}
	try {
		process.kill(-pid, "SIGKILL");
	} catch {
		try {
			process.kill(pid, "SIGKILL");
		} catch {}
	}
}

/**
 * pi's `BashOperations` on the local machine: `exec(command, cwd, { onData, signal, timeout, env })`
 * resolves `{ exitCode }`; it throws `Error("aborted")` on abort and `Error("timeout:<seconds>")`
 * on timeout, as pi's backend does.
 */
export function createLocalShellOperations(shellName, resolveShell) {
	return {
		async exec(command, cwd, { onData, signal, timeout, env } = {}) {
			let timeoutMs;
			if (timeout !== undefined) {
				if (!Number.isFinite(timeout) || timeout <= 0) throw new Error("Invalid timeout: must be a finite number of seconds");
				timeoutMs = Math.min(timeout * 1000, 2_147_483_647);
			}
			if (signal?.aborted) throw new Error("aborted");
			if (!existsSync(cwd)) throw new Error(`Working directory does not exist: ${cwd}\nCannot execute ${shellName} commands.`);
			const config = resolveShell();
			const child = spawn(config.shell, [...config.args, command], {
				cwd,
				detached: process.platform !== "win32",
				env: env ?? getShellEnv(),
				stdio: ["ignore", "pipe", "pipe"],
				windowsHide: true,
			});
			let timedOut = false;
			const kill = () => {
				if (child.pid) killProcessTree(child.pid);
			};
			const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
				timedOut = true;
				kill();
			}, timeoutMs);
			if (onData) {
				child.stdout.on("data", onData);
				child.stderr.on("data", onData);
			}
			if (signal) signal.addEventListener("abort", kill, { once: true });
			try {
				const code = await waitForChild(child);
				if (signal?.aborted) throw new Error("aborted");
				if (timedOut) throw new Error(`timeout:${timeout}`);
				return { exitCode: code ?? null };
			} finally {
				clearTimeout(timer);
				signal?.removeEventListener("abort", kill);
			}
		},
	};
}

export function createLocalBashOperations(options) {
	return createLocalShellOperations("bash", () => getShellConfig(options?.shellPath));
}

export function getPowerShellConfig(shellPath) {
	const shell = shellPath ?? onPath("pwsh") ?? onPath("powershell") ?? (process.platform === "win32" ? "powershell.exe" : "pwsh");
	return { shell, args: ["-NoProfile", "-NonInteractive", "-Command"], commandTransport: "args" };
}

export function createLocalPowerShellOperations(options) {
	return createLocalShellOperations("PowerShell", () => getPowerShellConfig(options?.shellPath));
}
