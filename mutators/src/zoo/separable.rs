//! Nets built on depthwise convolutions: MobileNetV2 (inverted residuals) and Xception
//! (separable convolutions).
use crate::builder::GraphBuilder;
use crate::ir::DType;

/// A depthwise 3×3 convolution (one group per channel).
fn depthwise(b: &mut GraphBuilder, x: &str, stride: i64) -> String {
    let c = b.shape(x)[1];
    b.conv(x, c, 3, stride, 1, c)
}

/// MobileNetV2 on 1×3×32×32: a strided stem, five inverted residual blocks (1×1 expand, ReLU6,
/// 3×3 depthwise, ReLU6, linear 1×1 projection; residual when the shape is kept), a 1×1 conv
/// and the classifier.
pub fn mobilenetv2() -> GraphBuilder {
    let mut b = GraphBuilder::new("mobilenetv2", 0x3b12);
    let x = b.input("image", DType::F32, &[1, 3, 32, 32]);
    let y = b.conv(&x, 8, 3, 2, 1, 1);
    let y = b.batchnorm(&y);
    let mut y = b.relu6(&y);
    // (expansion, output channels, stride)
    for (t, c, s) in [(1, 8, 1), (4, 12, 2), (4, 12, 1), (4, 16, 2), (4, 16, 1)] {
        let cin = b.shape(&y)[1];
        let mut h = y.clone();
        if t != 1 {
            h = b.conv(&h, cin * t, 1, 1, 0, 1);
            h = b.batchnorm(&h);
            h = b.relu6(&h);
        }
        h = depthwise(&mut b, &h, s);
        h = b.batchnorm(&h);
        h = b.relu6(&h);
        h = b.conv(&h, c, 1, 1, 0, 1);
        h = b.batchnorm(&h);
        y = if s == 1 && cin == c { b.add(&h, &y) } else { h };
    }
    let y = b.conv(&y, 32, 1, 1, 0, 1);
    let y = b.batchnorm(&y);
    let y = b.relu6(&y);
    let y = b.global_avg_pool(&y);
    let y = b.flatten(&y, 1);
    let y = b.gemm(&y, 10);
    b.output(&y);
    b
}

/// A separable convolution: 3×3 depthwise then 1×1 pointwise, then batch norm.
fn separable(b: &mut GraphBuilder, x: &str, out: i64) -> String {
    let y = depthwise(b, x, 1);
    let y = b.conv(&y, out, 1, 1, 0, 1);
    b.batchnorm(&y)
}

/// An Xception-shaped net on 1×3×32×32: entry flow (strided stem, two downsampling blocks of
/// separable convs with strided 1×1 projection shortcuts), a middle-flow block (three ReLU +
/// separable conv with an identity shortcut) and an exit flow.
pub fn xception() -> GraphBuilder {
    let mut b = GraphBuilder::new("xception", 0x7ce9);
    let x = b.input("image", DType::F32, &[1, 3, 32, 32]);
    let y = b.conv(&x, 8, 3, 2, 1, 1);
    let y = b.batchnorm(&y);
    let mut y = b.relu(&y);
    for ch in [16, 24] {
        let s = b.conv(&y, ch, 1, 2, 0, 1);
        let s = b.batchnorm(&s);
        let t = b.relu(&y);
        let t = separable(&mut b, &t, ch);
        let t = b.relu(&t);
        let t = separable(&mut b, &t, ch);
        let t = b.maxpool(&t, 3, 2, 1);
        y = b.add(&t, &s);
    }
    let mut t = y.clone();
    for _ in 0..3 {
        t = b.relu(&t);
        t = separable(&mut b, &t, 24);
    }
    let y = b.add(&t, &y);
    let y = separable(&mut b, &y, 32);
    let y = b.relu(&y);
    let y = b.global_avg_pool(&y);
    let y = b.flatten(&y, 1);
    let y = b.gemm(&y, 10);
    b.output(&y);
    b
}
