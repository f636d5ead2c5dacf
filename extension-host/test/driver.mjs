// A small Tandem stand-in for tests: starts an extension host as Tandem does (protocol lines on
// fd 3 via TANDEM_EXTENSION_OUTPUT_FD=3, requests on stdin), sends requests and notifications,
// and answers the host's own requests (ui/*, session/*, agent/*) with a handler the test sets.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const HOST_MAIN = join(HERE, "..", "src", "main.mjs");
export const PI_EXAMPLES = join(homedir(), ".cache/tandem/pi-1.6.0/node_modules/@earendil-works/pi-coding-agent/examples/extensions");
export const FIXTURES = join(HERE, "fixtures");

/** The Node to run the host with: TANDEM_TEST_NODE, Tandem's cached Node 24, else this one. */
export function nodeBinary() {
	if (process.env.TANDEM_TEST_NODE) return process.env.TANDEM_TEST_NODE;
	const cached = join(homedir(), ".cache/tandem/node-24.19.0/node-only/node");
	return existsSync(cached) ? cached : process.execPath;
}

export class HostProcess {
	/**
	 * @param {object} [options]
	 * @param {string[]} [options.command] program and arguments (default: the Node host)
	 * @param {boolean} [options.outputFd] use TANDEM_EXTENSION_OUTPUT_FD=3 (default true)
	 * @param {Record<string,string>} [options.env]
	 */
	constructor({ command, outputFd = true, env = {}, cwd } = {}) {
		const [program, ...args] = command ?? [nodeBinary(), HOST_MAIN];
		this.child = spawn(program, args, {
			stdio: ["pipe", "pipe", "pipe", "pipe"],
			env: { ...process.env, TANDEM_EXTENSION_PROTOCOL: "1", ...(outputFd ? { TANDEM_EXTENSION_OUTPUT_FD: "3" } : {}), ...env },
			cwd,
		});
		this.stdout = "";
		this.stderr = "";
		this.messages = [];
		this.notifications = [];
		this.pending = new Map();
		this.nextId = 1;
		this.waiters = [];
		/** Answers the host's requests: (method, params) => result (may be async). */
		this.onRequest = () => null;
		this.exited = new Promise((resolve) => this.child.on("exit", (code, signal) => resolve({ code, signal })));
		const protocol = outputFd ? this.child.stdio[3] : this.child.stdout;
		let buffer = "";
		protocol.setEncoding("utf8");
		protocol.on("data", (chunk) => {
			buffer += chunk;
			let newline;
			while ((newline = buffer.indexOf("\n")) !== -1) {
				const line = buffer.slice(0, newline);
				buffer = buffer.slice(newline + 1);
				if (line.trim()) this.receive(JSON.parse(line));
			}
		});
		if (outputFd) {
			this.child.stdout.setEncoding("utf8");
			this.child.stdout.on("data", (c) => (this.stdout += c));
		}
		this.child.stderr.setEncoding("utf8");
		this.child.stderr.on("data", (c) => (this.stderr += c));
	}

	receive(message) {
		this.messages.push(message);
		if (message.method && message.id !== undefined) {
			Promise.resolve()
				.then(() => this.onRequest(message.method, message.params))
				.then(
					(result) => this.write({ jsonrpc: "2.0", id: message.id, result: result ?? null }),
					(error) => this.write({ jsonrpc: "2.0", id: message.id, error: { code: -32001, message: String(error?.message ?? error) } }),
				);
			return;
		}
		if (message.method) {
			this.notifications.push(message);
			for (const waiter of [...this.waiters]) waiter();
			return;
		}
		const entry = this.pending.get(message.id);
		if (!entry) return;
		this.pending.delete(message.id);
		if (message.error) entry.reject(Object.assign(new Error(message.error.message), { code: message.error.code, data: message.error.data }));
		else entry.resolve(message.result);
	}

	write(message) {
		this.child.stdin.write(`${JSON.stringify(message)}\n`);
	}

	request(method, params, { timeoutMs = 15000 } = {}) {
		const id = this.nextId++;
		const promise = new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				this.pending.delete(id);
				reject(new Error(`no answer to ${method} within ${timeoutMs} ms; stderr:\n${this.stderr}`));
			}, timeoutMs);
			this.pending.set(id, {
				resolve: (v) => {
					clearTimeout(timer);
					resolve(v);
				},
				reject: (e) => {
					clearTimeout(timer);
					reject(e);
				},
			});
		});
		promise.id = id;
		this.write({ jsonrpc: "2.0", id, method, params });
		return promise;
	}

	notify(method, params) {
		this.write({ jsonrpc: "2.0", method, params });
	}

	/** Waits for a notification matching `predicate`. */
	waitForNotification(predicate, timeoutMs = 5000) {
		return new Promise((resolve, reject) => {
			const check = () => {
				const found = this.notifications.find(predicate);
				if (found) {
					this.waiters = this.waiters.filter((w) => w !== check);
					clearTimeout(timer);
					resolve(found);
				}
			};
			const timer = setTimeout(() => {
				this.waiters = this.waiters.filter((w) => w !== check);
				reject(new Error("notification did not come"));
			}, timeoutMs);
			this.waiters.push(check);
			check();
		});
	}

	initialize(extensions, extra = {}) {
		return this.request("initialize", {
			protocolVersion: 1,
			tandemVersion: "0.0.0-test",
			extensions: extensions.map((path) => (typeof path === "string" ? { path, scope: "cli" } : path)),
			cwd: process.cwd(),
			agentDir: join(process.env.TMPDIR ?? "/tmp", "tandem-test-agent"),
			mode: "print",
			hasUI: false,
			isProjectTrusted: true,
			flags: {},
			...extra,
		});
	}

	event(name, event) {
		return this.request("event", { name, event: { type: name, ...event } });
	}

	async close() {
		if (this.child.exitCode !== null || this.child.signalCode !== null) return this.exited;
		try {
			await this.request("shutdown", null, { timeoutMs: 3000 });
		} catch {}
		this.notify("exit");
		const timer = setTimeout(() => this.child.kill("SIGKILL"), 2000);
		const result = await this.exited;
		clearTimeout(timer);
		return result;
	}
}
