fn main() -> std::process::ExitCode {
    swarm::run()
}
