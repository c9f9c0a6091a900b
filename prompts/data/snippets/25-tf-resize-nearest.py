# framework: TensorFlow
# source: reports on the TensorFlow and ONNX converter trackers (search "image.resize nearest
#   half_pixel mismatch"): nearest-neighbour resize picks different source pixels.
import tensorflow as tf

x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
print(tf.image.resize(x, [6, 6], method="nearest"))
