//! A transformer encoder: multi-head self-attention written out with MatMul / Reshape /
//! Transpose / Softmax, post-norm `LayerNormalization`, and a GELU feed-forward.
use crate::builder::GraphBuilder;
use crate::ir::DType;

const BATCH: i64 = 1;
const SEQ: i64 = 8;
const MODEL: i64 = 32;
const HEADS: i64 = 4;
const HEAD: i64 = MODEL / HEADS;
const FF: i64 = 64;
const LAYERS: usize = 2;

/// [B, S, D] -> [B, H, S, Dh] (or [B, H, Dh, S] for keys when `keys` is set).
fn split_heads(b: &mut GraphBuilder, x: &str, keys: bool) -> String {
    let y = b.reshape(x, &[BATCH, SEQ, HEADS, HEAD]);
    b.transpose(&y, if keys { &[0, 2, 3, 1] } else { &[0, 2, 1, 3] })
}

fn self_attention(b: &mut GraphBuilder, x: &str) -> String {
    let q = b.linear(x, MODEL);
    let k = b.linear(x, MODEL);
    let v = b.linear(x, MODEL);
    let q = split_heads(b, &q, false);
    let k = split_heads(b, &k, true);
    let v = split_heads(b, &v, false);
    let scores = b.matmul(&q, &k);
    let scale = b.constant("attn_scale", &[], &[1.0 / (HEAD as f64).sqrt()]);
    let scores = b.mul(&scores, &scale);
    let probs = b.softmax(&scores, -1);
    let ctx = b.matmul(&probs, &v);
    let ctx = b.transpose(&ctx, &[0, 2, 1, 3]);
    let ctx = b.reshape(&ctx, &[BATCH, SEQ, MODEL]);
    b.linear(&ctx, MODEL)
}

/// Two encoder layers over a [1, 8, 32] sequence of embeddings (4 heads of 8).
pub fn transformer_encoder() -> GraphBuilder {
    let mut b = GraphBuilder::new("transformer_encoder", 0x7f0e);
    let mut x = b.input("embeddings", DType::F32, &[BATCH, SEQ, MODEL]);
    for _ in 0..LAYERS {
        let a = self_attention(&mut b, &x);
        let h = b.add(&x, &a);
        let h = b.layer_norm(&h);
        let f = b.linear(&h, FF);
        let f = b.gelu(&f);
        let f = b.linear(&f, MODEL);
        let y = b.add(&h, &f);
        x = b.layer_norm(&y);
    }
    b.output(&x);
    b
}
