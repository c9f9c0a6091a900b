//! Plain feed-forward convolutional nets: LeNet-5, a small AlexNet and a small VGG.
use crate::builder::GraphBuilder;
use crate::ir::DType;

/// LeNet-5 on a 1×1×28×28 image: two conv / average-pool stages, three fully connected layers
/// and a softmax.
pub fn lenet5() -> GraphBuilder {
    let mut b = GraphBuilder::new("lenet5", 0x1e_4e75);
    let x = b.input("image", DType::F32, &[1, 1, 28, 28]);
    let y = b.conv(&x, 6, 5, 1, 2, 1);
    let y = b.relu(&y);
    let y = b.avgpool(&y, 2, 2);
    let y = b.conv(&y, 16, 5, 1, 0, 1);
    let y = b.relu(&y);
    let y = b.avgpool(&y, 2, 2);
    let y = b.flatten(&y, 1);
    let y = b.gemm(&y, 120);
    let y = b.relu(&y);
    let y = b.gemm(&y, 84);
    let y = b.relu(&y);
    let y = b.gemm(&y, 10);
    let y = b.softmax(&y, 1);
    b.output(&y);
    b
}

/// An AlexNet-shaped net on 1×3×32×32: five convolutions (the first with a 5×5 kernel), three
/// overlapping 3×3/2 max pools, and a dropout-separated three-layer classifier.
pub fn alexnet() -> GraphBuilder {
    let mut b = GraphBuilder::new("alexnet", 0xa1e7);
    let x = b.input("image", DType::F32, &[1, 3, 32, 32]);
    let y = b.conv(&x, 16, 5, 1, 2, 1);
    let y = b.relu(&y);
    let y = b.maxpool(&y, 3, 2, 0);
    let y = b.conv(&y, 32, 3, 1, 1, 1);
    let y = b.relu(&y);
    let y = b.maxpool(&y, 3, 2, 0);
    let y = b.conv(&y, 48, 3, 1, 1, 1);
    let y = b.relu(&y);
    let y = b.conv(&y, 32, 3, 1, 1, 1);
    let y = b.relu(&y);
    let y = b.conv(&y, 32, 3, 1, 1, 1);
    let y = b.relu(&y);
    let y = b.maxpool(&y, 3, 2, 0);
    let y = b.flatten(&y, 1);
    let y = b.dropout(&y);
    let y = b.gemm(&y, 64);
    let y = b.relu(&y);
    let y = b.dropout(&y);
    let y = b.gemm(&y, 64);
    let y = b.relu(&y);
    let y = b.gemm(&y, 10);
    b.output(&y);
    b
}

/// A VGG-11-shaped net on 1×3×32×32: stacks of 3×3 convolutions (1, 1, 2, 2 per stage) each
/// closed by a 2×2 max pool, then two fully connected layers.
pub fn vgg() -> GraphBuilder {
    let mut b = GraphBuilder::new("vgg", 0x7661);
    let mut y = b.input("image", DType::F32, &[1, 3, 32, 32]);
    for (convs, ch) in [(1, 8), (1, 16), (2, 32), (2, 32)] {
        for _ in 0..convs {
            y = b.conv(&y, ch, 3, 1, 1, 1);
            y = b.relu(&y);
        }
        y = b.maxpool(&y, 2, 2, 0);
    }
    let y = b.flatten(&y, 1);
    let y = b.gemm(&y, 64);
    let y = b.relu(&y);
    let y = b.gemm(&y, 10);
    b.output(&y);
    b
}
