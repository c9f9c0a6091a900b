# framework: TensorFlow
# source: reports on the TensorFlow tracker (search "LeakyReLU alpha default"): the default
#   negative slope of Keras LeakyReLU differs from other frameworks.
import tensorflow as tf
from tensorflow.keras import layers

act = layers.LeakyReLU()
x = tf.constant([[-10.0, 0.0, 10.0]])
print(act(x))
