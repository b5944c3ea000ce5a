fn main() {
    std::process::exit(kraftd::server::cli::main());
}
