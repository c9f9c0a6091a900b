# framework: TensorFlow
# source: reports on the TensorFlow tracker (search "reduce_logsumexp inf nan"): logsumexp of a
#   row of -inf must be -inf, not NaN.
import tensorflow as tf

x = tf.constant([[float("-inf"), float("-inf")], [1.0, 2.0]])
print(tf.math.reduce_logsumexp(x, axis=1))
