//! Residual nets: basic blocks (ResNet-18 style) and bottleneck blocks (ResNet-50 style).
use crate::builder::GraphBuilder;
use crate::ir::DType;

fn conv_bn(b: &mut GraphBuilder, x: &str, ch: i64, k: i64, stride: i64) -> String {
    let y = b.conv(x, ch, k, stride, k / 2, 1);
    b.batchnorm(&y)
}

/// The shortcut of a block: identity, or a strided 1×1 conv + BN when the shape changes.
fn shortcut(b: &mut GraphBuilder, x: &str, ch: i64, stride: i64) -> String {
    if stride == 1 && b.shape(x)[1] == ch {
        x.to_string()
    } else {
        conv_bn(b, x, ch, 1, stride)
    }
}

fn stem(b: &mut GraphBuilder, ch: i64) -> String {
    let x = b.input("image", DType::F32, &[1, 3, 32, 32]);
    let y = conv_bn(b, &x, ch, 3, 1);
    b.relu(&y)
}

fn head(b: &mut GraphBuilder, x: &str) {
    let y = b.global_avg_pool(x);
    let y = b.flatten(&y, 1);
    let y = b.gemm(&y, 10);
    b.output(&y);
}

/// Three stages of one basic block each (8, 16, 32 channels; the last two downsample).
pub fn resnet_basic() -> GraphBuilder {
    let mut b = GraphBuilder::new("resnet_basic", 0x4e5b);
    let mut y = stem(&mut b, 8);
    for (ch, stride) in [(8, 1), (16, 2), (32, 2)] {
        let s = shortcut(&mut b, &y, ch, stride);
        let t = conv_bn(&mut b, &y, ch, 3, stride);
        let t = b.relu(&t);
        let t = conv_bn(&mut b, &t, ch, 3, 1);
        let t = b.add(&t, &s);
        y = b.relu(&t);
    }
    head(&mut b, &y);
    b
}

/// Three stages of bottleneck blocks (1×1 reduce, 3×3, 1×1 expand ×4), the first stage with
/// two blocks so that an identity shortcut appears too.
pub fn resnet_bottleneck() -> GraphBuilder {
    let mut b = GraphBuilder::new("resnet_bottleneck", 0xb0771e);
    let mut y = stem(&mut b, 16);
    for (mid, stride) in [(4, 1), (4, 1), (8, 2), (16, 2)] {
        let out = mid * 4;
        let s = shortcut(&mut b, &y, out, stride);
        let t = conv_bn(&mut b, &y, mid, 1, 1);
        let t = b.relu(&t);
        let t = conv_bn(&mut b, &t, mid, 3, stride);
        let t = b.relu(&t);
        let t = conv_bn(&mut b, &t, out, 1, 1);
        let t = b.add(&t, &s);
        y = b.relu(&t);
    }
    head(&mut b, &y);
    b
}
