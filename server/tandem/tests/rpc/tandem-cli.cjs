// pi's RpcClient starts `node <cliPath> --mode rpc ...`: this file stands in for pi's cli.js and
// runs the tandem binary named by TANDEM_BIN with the same arguments and stdio, passing on
// the signals RpcClient sends and the exit status.
const { spawn } = require("node:child_process");

const child = spawn(process.env.TANDEM_BIN, process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
