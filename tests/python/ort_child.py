"""onnxruntime in a child process, for the seed generators (gen_dag.py, gen_blocks.py): a crash
or a hang of onnxruntime costs one attempt at a model, never the generator's run."""
import concurrent.futures as cf


class OrtChild:
    """Calls `worker(model_bytes, inputs, outputs, seed)` in a one-process pool that is started
    again after a crash or a timeout; `worker` must be a module-level function (it is pickled)."""

    def __init__(self, worker, timeout=120):
        self.worker = worker
        self.timeout = timeout
        self.ex = None

    def run(self, model, meta, seed):
        if self.ex is None:
            self.ex = cf.ProcessPoolExecutor(max_workers=1)
        fut = self.ex.submit(self.worker, model.SerializeToString(), meta['inputs'],
                             meta['outputs'], seed)
        try:
            return fut.result(timeout=self.timeout)
        except cf.process.BrokenProcessPool:
            self.ex = None
            raise RuntimeError('onnxruntime process crashed')
        except cf.TimeoutError:
            self.ex.shutdown(wait=False, cancel_futures=True)
            self.ex = None
            raise RuntimeError('onnxruntime timed out')

    def close(self):
        if self.ex is not None:
            self.ex.shutdown()
