fn main() {
    for p in std::env::args().skip(1) {
        let m = mutagraph_ir::Model::load(std::path::Path::new(&p)).unwrap();
        let t = std::time::Instant::now();
        let plan = mutagraph_ir::solve::solve(&m, &Default::default()).unwrap();
        println!("== {p} ({:.2}s)\n{plan}", t.elapsed().as_secs_f64());
    }
}
