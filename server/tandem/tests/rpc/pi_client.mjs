// Drives an agent in RPC mode with pi 1.6's own RpcClient and prints what it answered as one
// JSON object. PI16_PACKAGE is the pi 1.6 package; RPC_CLI is the script RpcClient starts with
// node (pi's dist/cli.js, or tandem-cli.cjs for Tandem). The mock LLM answers the prompt.
import path from "node:path";
import { pathToFileURL } from "node:url";

const clientModule = path.join(process.env.PI16_PACKAGE, "dist/modes/rpc/rpc-client.js");
const { RpcClient } = await import(pathToFileURL(clientModule).href);

const client = new RpcClient({
  cliPath: process.env.RPC_CLI,
  cwd: process.cwd(),
  model: "mock/mock-model",
});
const result = {};
try {
  await client.start();
  const events = await client.promptAndWait("hi", undefined, 30000);
  result.events = events.map((e) => (e.message?.role ? `${e.type}:${e.message.role}` : e.type));
  result.lastText = await client.getLastAssistantText();
  result.state = await client.getState();
  result.messages = await client.getMessages();
  result.setModel = await client.setModel("mock", "mock-model");
  result.levels = await client.getAvailableThinkingLevels();
  result.bash = await client.bash("echo hi");
  result.afterBash = (await client.getMessages()).map((m) => m.role);
  result.newSession = await client.newSession();
  result.fresh = await client.getState();
  try {
    await client.setModel("mock", "nope");
    result.unknownModel = "accepted";
  } catch (e) {
    result.unknownModel = e.message;
  }
} catch (e) {
  result.failure = `${e.stack ?? e}\nstderr: ${client.getStderr()}`;
} finally {
  await client.stop();
}
process.stdout.write(`${JSON.stringify(result)}\n`);
