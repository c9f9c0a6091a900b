"""Worker side: one check of one model, in its own process."""

import json
import os
import sys
import time

import numpy as np

from .common import describe, first_line, flatten_error, load_npz


# numpy element types of onnxruntime's input type strings.
ORT_INPUT_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(int8)": np.int8,
    "tensor(int16)": np.int16,
    "tensor(int32)": np.int32,
    "tensor(int64)": np.int64,
    "tensor(uint8)": np.uint8,
    "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32,
    "tensor(uint64)": np.uint64,
    "tensor(bool)": np.bool_,
    "tensor(string)": np.str_,
}

# tract's element type mnemonics (for input facts) of numpy dtypes.
TRACT_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.float16): "f16",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.bool_): "bool",
}


class SetupError(Exception):
    """The bundle cannot be fed to the library as given (not a bug of the library)."""


def onnx_input_dtypes(model_path):
    """{graph input name: numpy dtype} as the ONNX graph declares them (tensors only)."""
    import onnx
    from onnx import helper

    model = onnx.load(model_path, load_external_data=False)
    dtypes = {}
    for vi in model.graph.input:
        if vi.type.HasField("tensor_type"):
            try:
                dtypes[vi.name] = np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
            except Exception:  # bfloat16, float8, undefined...: leave the array as stored
                pass
    return model, dtypes


def cast_to(value, dtype, name, notes):
    """`value` as `dtype` (noting the cast), refusing what numpy cannot represent."""
    if dtype is None or value.dtype == dtype:
        return value
    if dtype.kind in "US" and value.dtype.kind in "US":  # strings: numpy sizes them itself
        return value
    if dtype.kind == "V" or dtype.name.startswith(("bfloat", "float8")):
        raise SetupError("input '%s' has a type numpy cannot hold (%s)" % (name, dtype))
    notes.append("input '%s' cast from %s to %s" % (name, value.dtype, dtype))
    return value.astype(dtype)


def worker_checker(model_path, _inputs):
    import onnx

    model = onnx.load(model_path)
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    return [], []


def worker_ort(level):
    def run(model_path, inputs):
        import onnxruntime as ort

        notes = []
        options = ort.SessionOptions()
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
        feeds = {}
        for arg in session.get_inputs():
            if arg.name not in inputs:
                raise SetupError("the inputs file lacks the model input '%s'" % arg.name)
            if arg.type == "tensor(bfloat16)":
                raise SetupError("input '%s' is bfloat16, which numpy cannot hold" % arg.name)
            want = ORT_INPUT_TYPES.get(arg.type)
            feeds[arg.name] = cast_to(inputs[arg.name], None if want is None else np.dtype(want),
                                      arg.name, notes)
        for name in inputs:
            if name not in feeds:
                notes.append("input file holds '%s', which the session does not take" % name)
        names = [o.name for o in session.get_outputs()]
        values = session.run(names, feeds)
        return list(zip(names, values)), notes
    return run


def worker_onnx_ref(model_path, inputs):
    from onnx.reference import ReferenceEvaluator

    notes = []
    model, dtypes = onnx_input_dtypes(model_path)
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inputs:
            feeds[vi.name] = cast_to(inputs[vi.name], dtypes.get(vi.name), vi.name, notes)
        elif vi.name not in initializers:
            raise SetupError("the inputs file lacks the model input '%s'" % vi.name)
    evaluator = ReferenceEvaluator(model)
    values = evaluator.run(None, feeds)
    names = [o.name for o in model.graph.output]
    return list(zip(names, values)), notes


def worker_tract(model_path, inputs):
    import tract

    notes = []
    # tract reads the file itself; onnx only supplies the declared input types and the output
    # names (tract keeps the graph's output order), and may fail where tract does not.
    inference_model = tract.onnx().load(model_path)
    try:
        model, dtypes = onnx_input_dtypes(model_path)
        names = [o.name for o in model.graph.output]
    except Exception as e:
        notes.append("onnx could not read the model (%s); tract's own names are used"
                     % first_line(e))
        dtypes = {}
        names = [inference_model.output_name(i) for i in range(inference_model.output_count())]
    arrays = []
    for i in range(inference_model.input_count()):
        name = inference_model.input_name(i)
        if name not in inputs:
            raise SetupError("the inputs file lacks the model input '%s'" % name)
        value = cast_to(inputs[name], dtypes.get(name), name, notes)
        dt = TRACT_TYPES.get(value.dtype)
        if dt is None:
            raise SetupError("input '%s' has dtype %s, which the tract wheel cannot take"
                             % (name, value.dtype))
        # Fact syntax: "d0,d1,...,dt"; a rank-0 input is just "dt".
        spec = ",".join([str(d) for d in value.shape] + [dt])
        inference_model.set_input_fact(i, spec)
        arrays.append(np.ascontiguousarray(value))
    runnable = inference_model.into_model().into_runnable()
    outs = runnable.run(arrays)
    values = [o.to_numpy() for o in outs]
    if len(values) != len(names):
        notes.append("tract returned %d outputs, the ONNX graph declares %d (matched by position)"
                     % (len(values), len(names)))
    named = [(names[i] if i < len(names) else "#%d" % i, v) for i, v in enumerate(values)]
    return named, notes


WORKERS = {
    "checker": worker_checker,
    "ort-noopt": worker_ort("ORT_DISABLE_ALL"),
    "ort": worker_ort("ORT_ENABLE_ALL"),
    "onnx-ref": worker_onnx_ref,
    "tract": worker_tract,
}


def write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def worker_main(argv):
    """Worker process: `WORKER_FLAG task model inputs_npz_or_empty outdir`.

    Writes `outdir/result.json` ({status: ok|error|setup, message, outputs, notes, seconds})
    and, for outputs, `outdir/outputs.npz` (keys o0, o1, ... in output order). A crash or a
    hang leaves no result.json behind; the parent sees that from the exit status / timeout."""
    task, model_path, inputs_path, outdir = argv
    result = {"status": "ok", "message": "", "outputs": [], "notes": [], "seconds": None}
    arrays = {}
    try:
        inputs = load_npz(inputs_path) if inputs_path else {}
        start = time.perf_counter()
        outputs, notes = WORKERS[task](model_path, inputs)
        result["seconds"] = time.perf_counter() - start
        result["notes"] = notes
        for i, (name, value) in enumerate(outputs):
            entry = {"name": name, "key": None, "what": describe(value)}
            if isinstance(value, np.generic):
                value = np.asarray(value)
            if isinstance(value, np.ndarray):
                if value.dtype == object:  # ORT gives string tensors as object arrays
                    try:
                        value = value.astype(str)
                    except Exception:
                        value = None
                if value is not None:
                    entry["key"] = "o%d" % i
                    arrays[entry["key"]] = value
            result["outputs"].append(entry)
    except SetupError as e:
        result.update(status="setup", message=str(e))
    except Exception as e:  # any exception of the library is part of the story
        text = str(e) or type(e).__name__
        if task == "tract":
            text = flatten_error(text)
        result.update(status="error", message="%s: %s" % (type(e).__name__, text))
    if arrays:
        try:
            np.savez(os.path.join(outdir, "outputs.npz"), **arrays)
        except Exception as e:  # an output numpy cannot store: report it, keep the status
            for entry in result["outputs"]:
                entry["key"] = None
            result["notes"].append("outputs could not be passed back: %s" % first_line(e))
    write_json_atomic(os.path.join(outdir, "result.json"), result)
    sys.stdout.flush()
    sys.stderr.flush()
    return 0
