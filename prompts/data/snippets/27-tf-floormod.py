# framework: TensorFlow
# source: reports on the TensorFlow tracker (search "floormod negative divisor sign"): the sign
#   of floormod follows the divisor.
import tensorflow as tf

a = tf.constant([-7, 7, -7], dtype=tf.int32)
b = tf.constant([3, -3, -3], dtype=tf.int32)
print(tf.math.floormod(a, b))
