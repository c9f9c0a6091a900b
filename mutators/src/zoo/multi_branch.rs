//! Nets whose blocks concatenate branches: a DenseNet dense block and GoogLeNet inception
//! modules.
use crate::builder::GraphBuilder;
use crate::ir::DType;

fn bn_relu_conv(b: &mut GraphBuilder, x: &str, ch: i64, k: i64) -> String {
    let y = b.batchnorm(x);
    let y = b.relu(&y);
    b.conv(&y, ch, k, 1, k / 2, 1)
}

fn dense_block(b: &mut GraphBuilder, x: &str, layers: usize, growth: i64) -> String {
    let mut y = x.to_string();
    for _ in 0..layers {
        let t = bn_relu_conv(b, &y, 4 * growth, 1);
        let t = bn_relu_conv(b, &t, growth, 3);
        y = b.concat(&[&y, &t], 1);
    }
    y
}

/// DenseNet on 1×3×32×32: a stem, a dense block of four BN-ReLU-conv(1×1)-BN-ReLU-conv(3×3)
/// layers (growth 8) whose outputs are concatenated, a transition (BN-ReLU-conv 1×1, 2×2
/// average pool), a second dense block of three layers, and the classifier.
pub fn densenet_block() -> GraphBuilder {
    let mut b = GraphBuilder::new("densenet_block", 0xde5e);
    let x = b.input("image", DType::F32, &[1, 3, 32, 32]);
    let y = b.conv(&x, 16, 3, 1, 1, 1);
    let y = b.maxpool(&y, 2, 2, 0);
    let y = dense_block(&mut b, &y, 4, 8);
    let y = bn_relu_conv(&mut b, &y, 24, 1);
    let y = b.avgpool(&y, 2, 2);
    let y = dense_block(&mut b, &y, 3, 8);
    let y = b.batchnorm(&y);
    let y = b.relu(&y);
    let y = b.global_avg_pool(&y);
    let y = b.flatten(&y, 1);
    let y = b.gemm(&y, 10);
    b.output(&y);
    b
}

fn conv_relu(b: &mut GraphBuilder, x: &str, ch: i64, k: i64) -> String {
    let y = b.conv(x, ch, k, 1, k / 2, 1);
    b.relu(&y)
}

/// An inception module: 1×1; 1×1 → 3×3; 1×1 → 5×5; 3×3 max pool → 1×1; concatenated.
fn inception(
    b: &mut GraphBuilder,
    x: &str,
    c1: i64,
    c3: (i64, i64),
    c5: (i64, i64),
    cp: i64,
) -> String {
    let b1 = conv_relu(b, x, c1, 1);
    let b2 = conv_relu(b, x, c3.0, 1);
    let b2 = conv_relu(b, &b2, c3.1, 3);
    let b3 = conv_relu(b, x, c5.0, 1);
    let b3 = conv_relu(b, &b3, c5.1, 5);
    let b4 = b.maxpool(x, 3, 1, 1);
    let b4 = conv_relu(b, &b4, cp, 1);
    b.concat(&[&b1, &b2, &b3, &b4], 1)
}

/// GoogLeNet-shaped on 1×3×32×32: a stem, two inception modules, a 3×3/2 max pool, a third
/// module and the classifier.
pub fn inception_block() -> GraphBuilder {
    let mut b = GraphBuilder::new("inception_block", 0x1ce9);
    let x = b.input("image", DType::F32, &[1, 3, 32, 32]);
    let y = conv_relu(&mut b, &x, 16, 3);
    let y = b.maxpool(&y, 2, 2, 0);
    let y = inception(&mut b, &y, 8, (8, 12), (4, 6), 6);
    let y = inception(&mut b, &y, 12, (8, 16), (4, 8), 8);
    let y = b.maxpool(&y, 3, 2, 1);
    let y = inception(&mut b, &y, 16, (12, 20), (4, 8), 8);
    let y = b.global_avg_pool(&y);
    let y = b.flatten(&y, 1);
    let y = b.gemm(&y, 10);
    b.output(&y);
    b
}
