"""The parts of `engine/ray/mutagraph_ray.py` (a mutagraph campaign as N instances on Ray):

- `runner`: an instance's command line (`campaign_argv`, the one place that builds it) and the
  Ray actor that runs it on a node (`Runner`);
- `supervisor`: the driver's loop that starts the instances, restarts those whose process ended
  before the time limit, forwards signals, writes `ray-launcher.json` and sums the run up.

The CLI registers this package with Ray's cloudpickle as pickled by value, so a worker node
needs none of these files: only Python, `ray` and the mutagraph binary.
"""
