# framework: TensorFlow
# source: written for the screening test: lgamma has no ONNX op, and tf.raw_ops is not aligned.
import tensorflow as tf

x = tf.constant([0.5, 1.5])
print(tf.math.lgamma(x))
print(tf.raw_ops.Igamma(a=x, x=x))
