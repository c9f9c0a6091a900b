# framework: TensorFlow
# source: reports on the TensorFlow tracker (search "Conv2D same padding stride 2 output"):
#   channels_last Conv2D with 'same' padding and stride 2 on an odd input.
import tensorflow as tf

layer = tf.keras.layers.Conv2D(filters=4, kernel_size=3, strides=2, padding="same")
x = tf.random.normal([1, 7, 7, 3])
print(layer(x).shape)
