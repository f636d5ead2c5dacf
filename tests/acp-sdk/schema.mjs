// Checks every JSON-RPC message of a run against the ACP SDK's JSON Schema
// (schema/v1/schema.json, draft 2020-12).
//
// Each message is checked three ways:
//   1. against the whole schema (any agent <-> client message),
//   2. against the branch for the side that sent it ("Agent" or "Client", or the
//      protocol-level branch for `$/...` notifications),
//   3. against the definition for its method: request and notification params by
//      method name, response results by the method of the request they answer.
// The schema marks each definition with `x-method`, which gives the table for 3.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const require = createRequire(import.meta.url);
const SCHEMA_PATH = require.resolve("@agentclientprotocol/sdk/schema/v1/schema.json");

export class WireChecker {
  constructor() {
    const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8"));
    // strict: false because the schema carries its own annotations (x-side, x-method,
    // discriminator, ...) that ajv does not know.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
    addFormats(this.ajv);
    // Integer formats the schema uses that ajv-formats does not define.
    for (const [name, max] of [["uint16", 0xffff], ["uint32", 0xffffffff], ["uint64", Number.MAX_SAFE_INTEGER]]) {
      this.ajv.addFormat(name, { type: "number", validate: (n) => Number.isInteger(n) && n >= 0 && n <= max });
    }
    this.ajv.addSchema(schema, "acp");
    this.whole = this.ajv.getSchema("acp");

    const branch = (title) => {
      const index = schema.anyOf.findIndex((b) => b.title === title);
      if (index < 0) throw new Error(`schema has no top-level branch titled ${title}`);
      return { $ref: `acp#/anyOf/${index}` };
    };
    this.side = {
      agent: this.ajv.compile({ anyOf: [branch("Agent"), branch("ProtocolLevel")] }),
      client: this.ajv.compile({ anyOf: [branch("Client"), branch("ProtocolLevel")] }),
    };

    // Method name -> definition name, for params (requests, notifications) and results.
    this.paramsDef = new Map();
    this.resultDef = new Map();
    for (const [name, def] of Object.entries(schema.$defs)) {
      const method = def["x-method"];
      if (!method) continue;
      if (name.endsWith("Response")) this.resultDef.set(method, name);
      else this.paramsDef.set(method, name);
    }
    this.defs = new Map();
    // Requests still waiting for their answer, per sender: id -> method.
    this.pending = { agent: new Map(), client: new Map() };
    this.failures = [];
  }

  def(name) {
    if (!this.defs.has(name)) this.defs.set(name, this.ajv.getSchema(`acp#/$defs/${name}`));
    return this.defs.get(name);
  }

  // `sender` is "agent" or "client"; `line` is one line of the byte stream.
  check(sender, line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      this.fail(sender, line, "not JSON", [String(e.message)]);
      return undefined;
    }
    this.run(sender, msg, "whole schema", this.whole, msg);
    this.run(sender, msg, `${sender} messages`, this.side[sender], msg);

    const receiver = sender === "agent" ? "client" : "agent";
    if (typeof msg.method === "string") {
      const def = this.paramsDef.get(msg.method);
      if (def) this.run(sender, msg, `${msg.method} params (${def})`, this.def(def), msg.params ?? {});
      else if (!msg.method.startsWith("_")) this.fail(sender, msg, "unknown method", [msg.method]);
      if (msg.id !== undefined) this.pending[sender].set(msg.id, msg.method);
    } else if (msg.id !== undefined) {
      const method = this.pending[receiver].get(msg.id);
      if (method === undefined) {
        this.fail(sender, msg, "response to no open request", [`id ${JSON.stringify(msg.id)}`]);
      } else {
        this.pending[receiver].delete(msg.id);
        const def = this.resultDef.get(method);
        if ("result" in msg && def) this.run(sender, msg, `${method} result (${def})`, this.def(def), msg.result);
      }
    }
    return msg;
  }

  run(sender, msg, what, validate, value) {
    if (!validate(value)) this.fail(sender, msg, what, validate.errors);
  }

  fail(sender, message, what, errors) {
    this.failures.push({ sender, what, message, errors });
  }
}
