//! The `tandem` binary: everything is in the library ([`tandem::entry`]).

fn main() -> std::process::ExitCode {
    tandem::entry::main()
}
