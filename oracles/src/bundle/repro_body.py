
# ---- settings you may change ----
TIMEOUT_SECONDS = 600.0  # a run still going after this long is stopped
HANG_SECONDS = 60.0  # kind "hang": a run still going after this long reproduces the bug
REPEAT_RUNS = 5  # kinds "flaky" and "slow": the model runs this many times in one session
SHOW = 10  # values printed per tensor

HERE = os.path.dirname(os.path.abspath(__file__))

# How mutagraph runs ONNX Runtime, by backend name: (graph optimization level, execution
# providers in order of preference). One intra-op thread, as mutagraph runs it.
ORT_VARIANTS = {
    "ort": ("ORT_ENABLE_ALL", ["CPUExecutionProvider"]),
    "ort-noopt": ("ORT_DISABLE_ALL", ["CPUExecutionProvider"]),
    "ort-cuda": ("ORT_ENABLE_ALL", ["CUDAExecutionProvider", "CPUExecutionProvider"]),
}

# numpy element types of ONNX Runtime's input types.
ORT_INPUT_TYPES = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int8)": np.int8, "tensor(int16)": np.int16, "tensor(int32)": np.int32,
    "tensor(int64)": np.int64, "tensor(uint8)": np.uint8, "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32, "tensor(uint64)": np.uint64, "tensor(bool)": np.bool_,
    "tensor(string)": np.str_,
}

# tract's names of numpy element types (for input facts).
TRACT_TYPES = {
    "float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "int16": "i16",
    "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
    "uint64": "u64", "bool": "bool",
}


# Attributes (and inputs) onnx.reference (onnx 1.22) accepts and ignores: where a model sets
# them, its values are not the operator's, and it is not asked.
ONNX_REFERENCE_IGNORES = {
    "RNN": ("activations", "activation_alpha", "activation_beta", "clip", "direction"),
    "GRU": ("activations", "activation_alpha", "activation_beta", "clip", "direction",
            "linear_before_reset"),
    "LSTM": ("activations", "activation_alpha", "activation_beta", "clip", "direction",
             "input_forget"),
}
ATTRIBUTE_DEFAULTS = {"direction": b"forward", "linear_before_reset": 0, "input_forget": 0}
# The activations a recurrent op takes by default (one list per direction).
DEFAULT_ACTIVATIONS = {"RNN": [b"Tanh"], "GRU": [b"Sigmoid", b"Tanh"],
                       "LSTM": [b"Sigmoid", b"Tanh", b"Tanh"]}


def changes_result(op, attrs, name):
    """Whether the attribute `name` (set on a node of `op` with attributes `attrs`) gives
    another result than leaving it out: its default value does not, nor alphas and betas of the
    default activations (which take none)."""
    value = attrs[name]
    default = DEFAULT_ACTIVATIONS.get(op, [])
    default_activations = [bytes(a) for a in attrs.get("activations", default)] in (
        default, default * 2)
    if name == "activations":
        return not default_activations
    if name in ("activation_alpha", "activation_beta"):
        return not default_activations
    return value != ATTRIBUTE_DEFAULTS.get(name, object())
# Ops whose onnx.reference kernel (onnx 1.22) departs from the operator's values on some inputs.
ONNX_REFERENCE_UNSTABLE = {
    # op_log_softmax.py takes the log of Softmax's result: -inf once exp underflows, where
    # x - max - log(sum(exp(x - max))) is finite.
    "LogSoftmax": "onnx.reference computes LogSoftmax as the log of Softmax, which is -inf "
                  "where the result is finite once exp underflows",
}


def window_blind_spot(node, opset):
    """Why onnx.reference (onnx 1.22) computes this windowed or normalizing node otherwise than
    its text, or None (each checked against the text's formula and ONNX Runtime): LRN's channel
    window, BatchNormalization before opset 14 (its batch's statistics), a Conv or ConvTranspose
    auto_pad (VALID padded as SAME), uneven pads of a convolution or pool, a grouped
    ConvTranspose."""
    from onnx import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    op = node.op_type
    if op == "LRN":
        return "onnx.reference's LRN does not sum the squares over the channel window the text defines"
    if op == "BatchNormalization" and opset < 14:
        return ("onnx.reference's BatchNormalization before opset 14 normalizes with the batch's "
                "own statistics, not the given mean and variance")
    if op not in ("Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool"):
        return None
    if op in ("Conv", "ConvTranspose") and attrs.get("auto_pad", b"NOTSET") != b"NOTSET":
        return "onnx.reference computes %s's auto_pad windows otherwise than the text" % op
    pads = list(attrs.get("pads", []))
    half = len(pads) // 2
    if pads[:half] != pads[half:]:
        return "onnx.reference reads %s's uneven pads in another order than the text" % op
    if op == "ConvTranspose" and attrs.get("group", 1) > 1:
        return "onnx.reference cuts a grouped ConvTranspose's weight otherwise than the text"
    return None


def same_padding_even(model, node, attrs):
    """Whether every spatial axis of an undilated SAME pool pads evenly (the total padding
    max(0, (ceil(n / s) - 1) * s + k - n) even), read from the input's declared shape; False
    when a size is not known."""
    import math

    shapes = {v.name: v.type.tensor_type.shape
              for v in list(model.graph.input) + list(model.graph.value_info)}
    shape = shapes.get(node.input[0])
    dims = [d.dim_value if d.HasField("dim_value") else None for d in shape.dim] if shape else []
    kernel = list(attrs.get("kernel_shape", []))
    strides = list(attrs.get("strides", [])) or [1] * len(kernel)
    spatial = dims[2:]
    if not kernel or len(spatial) != len(kernel) or None in spatial:
        return False
    for n, k, s in zip(spatial, kernel, strides):
        total = max(0, (math.ceil(n / s) - 1) * s + k - n)
        if total % 2:
            return False
    return True


def onnx_reference_blind_spot(model_path):
    """Why onnx.reference's values would not be the operator's for this model, or None."""
    import onnx
    from onnx import helper

    model = onnx.load(model_path)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    for node in model.graph.node:
        if node.op_type in ONNX_REFERENCE_UNSTABLE:
            return ONNX_REFERENCE_UNSTABLE[node.op_type]
        window = window_blind_spot(node, opset)
        if window:
            return window
        if node.op_type in ("MaxPool", "AveragePool", "LpPool"):
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            if attrs.get("auto_pad", b"NOTSET") in (b"SAME_UPPER", b"SAME_LOWER"):
                if any(d != 1 for d in attrs.get("dilations", [])):
                    return ("onnx.reference pads %s's SAME windows as if undilated" %
                            node.op_type)
                if not same_padding_even(model, node, attrs):
                    return ("onnx.reference sizes %s's SAME output otherwise than the text "
                            "where the padding is uneven (one element short)" % node.op_type)
        ignored = ONNX_REFERENCE_IGNORES.get(node.op_type, ())
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        names = [n for n in attrs if n in ignored and changes_result(node.op_type, attrs, n)]
        if names:
            return "onnx.reference ignores %s's %s %s" % (
                node.op_type, "attribute" if len(names) == 1 else "attributes",
                ", ".join(names))
        if ignored and len(node.input) > 4 and node.input[4]:
            return "onnx.reference ignores %s's sequence_lens" % node.op_type
    return None


def embedded_expected():
    """EMBEDDED_EXPECTED as arrays, by output name."""
    import base64
    return {name: np.frombuffer(base64.b64decode(data), dtype=np.dtype(descr)).reshape(shape)
            for name, (descr, shape, data) in EMBEDDED_EXPECTED.items()}


def onnx_reference_outputs(model_path, inputs):
    """(outputs by name, None) as onnx.reference.ReferenceEvaluator computes them, or (None,
    why) when it cannot (the onnx package missing, an op it lacks, attributes it ignores, an
    error of its own)."""
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        return None, "the onnx package is not installed (pip install onnx)"
    blind = onnx_reference_blind_spot(model_path)
    if blind:
        return None, blind
    try:
        evaluator = ReferenceEvaluator(model_path)
        names = list(evaluator.output_names)
        values = evaluator.run(None, {k: inputs[k] for k in evaluator.input_names})
    except Exception as e:  # an op it lacks, a type it does not take
        return None, "onnx.reference cannot run the model: %s: %s" % (
            type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
    return dict(zip(names, (np.asarray(v) for v in values))), None


def expected_values(model_path, inputs, recompute):
    """(expected, native) for the kinds compared with expected values: mutagraph's stored f64
    and native-precision reference outputs, or onnx.reference's when asked (--recompute) or
    when the stored files are missing; (None, None) with a note when there are none."""
    if KIND not in ("inconsistency", "nan"):
        return None, None
    stored = EXPECTED and os.path.isfile(os.path.join(HERE, EXPECTED))
    if stored and not recompute:
        print("expected values: %s (mutagraph's f64 reference); --recompute computes them "
              "with onnx.reference instead" % EXPECTED)
        native = EXPECTED_NATIVE if EXPECTED_NATIVE and \
            os.path.isfile(os.path.join(HERE, EXPECTED_NATIVE)) else None
        return load_npz(EXPECTED), load_npz(native) if native else None
    why = "asked for (--recompute)" if recompute else "%s is missing" % (EXPECTED or
                                                                         "the expected file")
    computed, error = onnx_reference_outputs(model_path, inputs)
    own = model_path == os.path.join(HERE, MODEL)
    if computed is not None and EMBEDDED_EXPECTED and own:
        differ = disagreement(computed, embedded_expected())
        if differ:
            print("expected values: mutagraph's f64 reference, written into this script; "
                  "onnx.reference.ReferenceEvaluator gives other values (%s): the finding rests "
                  "on the operator's text as mutagraph's reference computes it (%s)" %
                  (differ, why))
            return embedded_expected(), None
    if computed is not None:
        print("expected values: computed by onnx.reference.ReferenceEvaluator (%s)" % why)
        return computed, None
    if stored and own:
        print("expected values: %s (mutagraph's f64 reference), not onnx.reference's (%s)" %
              (EXPECTED, error))
        return load_npz(EXPECTED), None
    if EMBEDDED_EXPECTED and own:
        print("expected values: mutagraph's f64 reference, written into this script "
              "(%s; %s)" % (why, error))
        return embedded_expected(), None
    print("expected values: none (%s; %s)" % (why, error))
    return None, None


def disagreement(computed, embedded):
    """Where onnx.reference's outputs and the embedded ones differ beyond float rounding
    (rtol 1e-3, atol 1e-5; integers exactly), in words, or None: onnx.reference has its own
    bugs (a QuantizeLinear of values beyond int32's range overflows its cast)."""
    import numpy as np

    for name, want in embedded.items():
        got = computed.get(name)
        if got is None:
            continue
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape:
            return "output %s: shape %s, not %s" % (name, got.shape, want.shape)
        floats = want.dtype.kind in "fc"
        same = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3,
                           atol=1e-5, equal_nan=True) if floats else np.array_equal(got, want)
        if not same:
            return "output %s: %s where mutagraph's reference gives %s" % (
                name, np.array2string(got.ravel()[:4]), np.array2string(want.ravel()[:4]))
    return None


def inputs_for(model_path):
    """The bundle's inputs file for `model_path`: INPUTS when it holds every graph input of the
    model, else inputs.npz (the model as found, beside the minimized one) when that does. The
    stored expected values are the script's model's: another model's are computed."""
    if model_path == os.path.join(HERE, MODEL):
        return INPUTS
    try:
        import onnx
        graph = onnx.load(model_path).graph
    except Exception:  # no onnx package, or a model it cannot read: the library will say
        return INPUTS
    inits = {t.name for t in graph.initializer}
    wanted = {i.name: i for i in graph.input if i.name not in inits}

    def fits(arrays):
        # Every input there, of a shape the model's fixed dimensions allow (the minimized
        # inputs share the original's names at smaller shapes).
        for name, vi in wanted.items():
            if name not in arrays:
                return False
            dims = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else []
            shape = getattr(arrays[name], "shape", ())
            if dims and len(dims) != len(shape):
                return False
            if any(d.HasField("dim_value") and d.dim_value != n for d, n in zip(dims, shape)):
                return False
        return True

    for candidate in (INPUTS, "inputs.npz"):
        if os.path.isfile(os.path.join(HERE, candidate)) and fits(load_npz(candidate)):
            return candidate
    return INPUTS


def load_npz(file_name):
    """The arrays of an .npz file next to this script, by tensor name.

    mutagraph stores a tensor named e.g. "conv/1:0" under the key "conv%2F1%3A0" (characters
    other than letters, digits, '_', '-', '.' are percent-encoded so that the archive unpacks
    anywhere); urllib.parse.unquote gives the name back.
    """
    with np.load(os.path.join(HERE, file_name), allow_pickle=False) as archive:
        return {urllib.parse.unquote(key): archive[key] for key in archive.files}


def describe(value):
    """dtype, shape and the first values of an output."""
    if not isinstance(value, np.ndarray):
        return "%s (not a tensor): %r" % (type(value).__name__, value)
    flat = value.reshape(-1)
    return "%s shape %s, first %d of %d: %s" % (
        value.dtype, list(value.shape), min(SHOW, flat.size), flat.size, flat[:SHOW].tolist())


class SetupError(Exception):
    """The model cannot be run as given (not a bug of the library)."""


def graph_outputs(model_path):
    """The model's output names, in order (read with the onnx package when it is installed)."""
    try:
        import onnx
    except ImportError:
        return None
    return [o.name for o in onnx.load(model_path).graph.output]


def run_ort(model_path, inputs, opt_level, providers, runs, disabled=()):
    """Runs with onnxruntime (the optimizer passes in `disabled` turned off); returns (outputs
    of every run, seconds per run, notes)."""
    import onnxruntime as ort

    notes = []
    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, opt_level)
    options.intra_op_num_threads = 1
    available = ort.get_available_providers()
    use = [p for p in providers if p in available]
    if use != providers:
        notes.append("execution providers %s not available here" %
                     [p for p in providers if p not in available])
    session = ort.InferenceSession(model_path, options, providers=use or None,
                                   disabled_optimizers=list(disabled))
    feeds = {}
    for arg in session.get_inputs():
        if arg.name not in inputs:
            raise SetupError("%s lacks the model input '%s'" % (INPUTS, arg.name))
        value = inputs[arg.name]
        if arg.type == "tensor(bfloat16)":
            raise SetupError("input '%s' is bfloat16, which numpy cannot hold" % arg.name)
        want = ORT_INPUT_TYPES.get(arg.type)
        if want is not None and value.dtype.type is not want:
            notes.append("input '%s' cast from %s to %s" % (arg.name, value.dtype, np.dtype(want)))
            value = value.astype(want)
        feeds[arg.name] = value
    names = [o.name for o in session.get_outputs()]
    results, seconds = [], []
    for _ in range(runs):
        start = time.perf_counter()
        values = session.run(names, feeds)
        seconds.append(time.perf_counter() - start)
        results.append(list(zip(names, values)))
    return results, seconds, notes


def run_tract(model_path, inputs, runs):
    """Runs with tract's Python package (into_runnable() optimizes, as `tract-opt` runs). When tract
    cannot compile the model for its inputs' types and shapes and some inputs are integers (a
    shape, pads, axes or sizes tract needs as constants), it is compiled again with every
    input fixed to its value, as mutagraph's tract pipeline does; a note says so."""
    import tract

    try:
        return compile_and_run_tract(tract, model_path, inputs, runs, [])
    except CompileError as e:
        # the crate retries only when an input is int32 or int64 (shapes, pads, axes, sizes)
        if not any(np.asarray(v).dtype in (np.int32, np.int64) for v in inputs.values()):
            raise e.cause
        frozen, fixed = frozen_model(model_path, inputs, list(inputs))
        # printed here (this runs in the child process) so that it shows whatever follows
        print("   note: tract cannot compile the model for its inputs' types and shapes (%s); "
              "compiled again with its inputs (%s) fixed to their values, as mutagraph's "
              "tract pipeline does when some are integers" % (e.cause, ", ".join(fixed)))
        sys.stdout.flush()
        try:
            return compile_and_run_tract(tract, frozen, inputs, runs, [])
        except CompileError as again:
            # both failures, as the crate pipeline reports them
            raise RuntimeError("%s; with the inputs fixed to their values: %s" %
                               (e.cause, again.cause))
        finally:
            os.unlink(frozen)


class CompileError(Exception):
    """tract failed before running the model (loading, typing, decluttering)."""

    def __init__(self, cause):
        Exception.__init__(self, str(cause))
        self.cause = cause


def frozen_model(model_path, inputs, names):
    """A temporary copy of the model whose inputs `names` are initializers holding their
    values; returns its path and the names fixed."""
    import tempfile
    import onnx
    from onnx import numpy_helper

    model = onnx.load(model_path)
    fixed = []
    for vi in list(model.graph.input):
        if vi.name in names and vi.name in inputs:
            model.graph.initializer.append(numpy_helper.from_array(np.asarray(inputs[vi.name]), vi.name))
            model.graph.input.remove(vi)
            fixed.append(vi.name)
    handle, path = tempfile.mkstemp(suffix=".onnx")
    os.close(handle)
    onnx.save(model, path)
    return path, fixed


def compile_and_run_tract(tract, model_path, inputs, runs, notes):
    try:
        model = tract.onnx().load(model_path)
    except Exception as e:  # the library's own failure to load is compile-time
        raise CompileError(e)
    arrays = []
    for i in range(model.input_count()):
        name = model.input_name(i)
        if name not in inputs:
            raise SetupError("%s lacks the model input '%s'" % (INPUTS, name))
        # np.ascontiguousarray would make a scalar 1-D: a copy keeps its rank and is contiguous
        value = np.array(inputs[name], copy=True, order="C")
        dt = TRACT_TYPES.get(str(value.dtype))
        if dt is None:
            raise SetupError("input '%s' is %s, which tract's package does not take" %
                             (name, value.dtype))
        model.set_input_fact(i, ",".join([str(d) for d in value.shape] + [dt]))
        arrays.append(value)
    try:
        runnable = model.into_model().into_runnable()
    except Exception as e:
        raise CompileError(e)
    names = graph_outputs(model_path)
    results, seconds = [], []
    for _ in range(runs):
        start = time.perf_counter()
        values = [tract_numpy(t, notes) for t in runnable.run(arrays)]
        seconds.append(time.perf_counter() - start)
        if names is None or len(names) != len(values):
            names = ["output_%d" % k for k in range(len(values))]
        results.append(list(zip(names, values)))
    return results, seconds, notes


def tract_numpy(tensor, notes):
    """A tract output as numpy. A value tract keeps as its symbolic-dimension type TDim (a
    Shape's output) has no numpy form in the package: it is converted to int64, the type the
    model declares, and a note says so."""
    try:
        return tensor.to_numpy()
    except Exception as e:
        if "TDim" not in str(e):
            raise
        from tract.tensor import DatumType
        note = ("tract returned an output as its own dimension type TDim, which its package "
                "cannot hand to numpy: converted to int64 (convert_to)")
        if note not in notes:
            notes.append(note)
        return tensor.convert_to(DatumType.I64).to_numpy()


def child_main(conn, library, variant, model_path, inputs, runs, disabled, err_path):
    """Runs in a child process, so that a crash or a hang of the library cannot take this
    script down. Sends back ("ok", results, seconds, peak RSS, notes), ("error", message,
    notes) or ("setup", message, notes). What the library writes to standard error goes to
    `err_path` (a panic's message, when the process dies of it)."""
    notes = []
    sys.stderr.flush()
    os.dup2(os.open(err_path, os.O_WRONLY | os.O_TRUNC), 2)
    try:
        if library == "onnxruntime":
            opt_level, providers = ORT_VARIANTS.get(variant, ORT_VARIANTS["ort"])
            results, seconds, notes = run_ort(model_path, inputs, opt_level, providers, runs,
                                              disabled)
        else:
            results, seconds, notes = run_tract(model_path, inputs, runs)
        conn.send(("ok", results, seconds, peak_rss_mib(), notes))
    except SetupError as e:
        conn.send(("setup", str(e), notes))
    except ImportError as e:
        conn.send(("setup", "%s (pip install %s)" % (e, PIP_PACKAGE), notes))
    except Exception as e:  # any exception of the library is part of the story
        conn.send(("error", "%s: %s" % (type(e).__name__, e), notes))
    finally:
        conn.close()


def peak_rss_mib():
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / (1024.0 * 1024.0) if sys.platform == "darwin" else kib / 1024.0


class Run:
    """What one run gave: status is "ok", "error" (an exception), "crash" (the process
    died), "hang" (stopped after the time limit) or "setup"."""

    def __init__(self, status, message="", runs=None, seconds=None, rss=None):
        self.status, self.message = status, message
        self.runs = runs or []  # [(name, value)] per run
        self.outputs = self.runs[0] if self.runs else []
        self.seconds, self.rss = seconds or [], rss


def run_library(variant, model_path, inputs, runs, timeout, disabled=()):
    label = describe_variant(variant)
    if disabled:
        label += ", disabled_optimizers=%s" % list(disabled)
    print("\n-- %s" % label)
    sys.stdout.flush()
    ctx = multiprocessing.get_context("spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    import tempfile
    err = tempfile.NamedTemporaryFile(prefix="repro-", suffix=".stderr", delete=False)
    err.close()
    child = ctx.Process(target=child_main,
                        args=(sender, LIBRARY, variant, model_path, inputs, runs,
                              tuple(disabled), err.name))
    child.start()
    sender.close()
    try:
        return wait_for(child, receiver, timeout, err.name)
    finally:
        os.unlink(err.name)


def panic_text(err_path):
    """What the library wrote to standard error, echoed here; the panic's message when it
    panicked (`panicked at FILE:LINE:COL:` and the lines after it), else None."""
    with open(err_path, errors="replace") as f:
        text = f.read()
    if text.strip():
        sys.stdout.write(text[-4000:])
    # The first panic is the cause; one across the library's C interface then panics again
    # ("panic in a function that cannot unwind") and aborts.
    at = text.find("panicked at ")
    if at < 0:
        return None
    ends = [i for i in (text.find("panicked at ", at + 1), text.find("stack backtrace:", at))
            if i > 0]
    return " ".join(text[at:min(ends) if ends else len(text)].split())[:600]


def wait_for(child, receiver, timeout, err_path):
    """The child's Run: its message, or how it ended (with its panic's message)."""
    try:
        ready = receiver.poll(timeout)
    except (EOFError, OSError):
        ready = True
    if not ready:
        child.kill()
        child.join()
        return Run("hang", "no result after %.0f s (process stopped)" % timeout)
    try:
        message = receiver.recv()
    except (EOFError, OSError):
        message = None
    child.join(60)
    panic = panic_text(err_path)
    if message is None:
        code = child.exitcode
        how = "killed by signal %d" % -code if code is not None and code < 0 else \
            "exit code %s" % code
        said = "; it %s" % panic if panic else ""
        return Run("crash", "the process running %s died (%s)%s" % (LIBRARY, how, said))
    for note in message[-1]:
        print("   note:", note)
    if message[0] != "ok":
        return Run(message[0], message[1])
    _, results, seconds, rss, _ = message
    return Run("ok", runs=results, seconds=seconds, rss=rss)


def describe_variant(variant):
    if LIBRARY == "onnxruntime":
        opt_level, providers = ORT_VARIANTS.get(variant, ORT_VARIANTS["ort"])
        return "onnxruntime as '%s': graph_optimization_level=%s, providers=%s" % (
            variant, opt_level, providers)
    # tract's package prepares a model with its default CPU runtime, which optimizes it
    # (into_optimized): that is the crate's `tract-opt` pipeline; `tract` (decluttered only)
    # has no counterpart in the package.
    return "tract (Python package: into_runnable() optimizes the model) for '%s'" % variant


def tolerance(name):
    return TOLERANCES.get(name, DEFAULT_TOLERANCE)


def close(x, a, rtol, atol):
    """|a - x| <= atol + rtol * |x| element-wise; NaN matches NaN, infinities match exactly."""
    both_nan = np.isnan(x) & np.isnan(a)
    same_inf = np.isinf(x) & (x == a)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(a - x) <= atol + rtol * np.abs(x)
    return both_nan | same_inf | (np.isfinite(x) & np.isfinite(a) & near)


def compare(name, actual, expected, native):
    """Error metrics of one output against the envelope of the two reference values: an element
    is right when it is within tolerance of the f64 reference or of the reference computed in
    the model's own float types, or lies between them."""
    a, e = np.asarray(actual), np.asarray(expected)
    m = {"size": e.size, "mismatches": 0, "max_abs": 0.0, "new_nonfinite": 0, "problem": None}
    if a.shape != e.shape:
        m["problem"] = "shape %s, expected %s" % (list(a.shape), list(e.shape))
        m["mismatches"] = max(a.size, e.size, 1)
        return m
    if a.dtype.kind not in "biuf" or e.dtype.kind not in "biuf":
        m["mismatches"] = int(np.count_nonzero(a != e))
        return m
    af, ef = a.astype(np.float64), e.astype(np.float64)
    nf = ef if native is None or np.asarray(native).shape != e.shape else \
        np.asarray(native).astype(np.float64)
    rtol, atol = tolerance(name)
    if a.dtype.kind != "f" and e.dtype.kind != "f" and atol < 1.0:
        rtol, atol = 0.0, 0.0  # integers compare exactly, unless whole units are allowed
    with np.errstate(invalid="ignore"):
        between = (af >= np.minimum(ef, nf)) & (af <= np.maximum(ef, nf))
    ok = close(ef, af, rtol, atol) | close(nf, af, rtol, atol) | between
    m["mismatches"] = int((~ok).sum())
    m["new_nonfinite"] = int((~np.isfinite(af) & np.isfinite(ef) & np.isfinite(nf)).sum())
    # An infinity against a finite value (or NaN against a number) is an unbounded error, not
    # one left out; equal infinities and NaN against NaN are none.
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(af - ef)
    same = (af == ef) | (np.isnan(af) & np.isnan(ef))
    diff = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
    if diff.size:
        m["max_abs"] = float(diff.max())
    bad = np.flatnonzero(~ok.reshape(-1))
    m["first"] = [(int(i), float(ef.reshape(-1)[i]), float(af.reshape(-1)[i])) for i in bad[:5]]
    return m


def summarize(m):
    if m["problem"]:
        return m["problem"]
    text = "%d of %d elements outside the expected values (max abs error %.6g)" % (
        m["mismatches"], m["size"], m["max_abs"])
    if m.get("first"):
        text += "; first: " + ", ".join("[%d] expected %.6g got %.6g" % f for f in m["first"][:3])
    return text


def check(outputs, expected, native):
    """{name: metrics} of every output the reference has (a missing one is a mismatch)."""
    metrics = {}
    got = dict(outputs)
    for name, want in (expected or {}).items():
        if name not in got:
            metrics[name] = {"mismatches": 1, "new_nonfinite": 0, "problem": "output missing"}
        elif isinstance(got[name], np.ndarray):
            metrics[name] = compare(name, got[name], want, (native or {}).get(name))
    return metrics


def show(run, expected, native):
    if run.status != "ok":
        print("   %s: %s" % (run.status, run.message))
        return
    print("   ran in %s s" % ", ".join("%.4f" % s for s in run.seconds))
    metrics = check(run.outputs, expected, native)
    for name, value in run.outputs:
        print("   output '%s': %s" % (name, describe(value)))
        if expected is not None and name in expected:
            print("      expected: %s" % describe(expected[name]))
            if name in metrics:
                print("      vs expected: %s" % summarize(metrics[name]))


def squeeze(text):
    """Lowercase with every run of whitespace one space (libraries wrap long messages)."""
    return " ".join(text.lower().split())


def same_error(expected, message):
    """Whether `message` says what `expected` says, the model's names and numbers aside (node
    names, shapes and counts differ between the minimized model and another one)."""
    import re

    def shape(text):
        text = re.sub(r"\"[^\"\s]*\"|'[^'\s]*'", "_", squeeze(text))
        # ONNX Runtime puts names in parentheses: "input parameter (greaterorequal_1)".
        text = re.sub(r"\([A-Za-z_][^()\s]*\)", "(_)", text)
        return re.sub(r"[0-9]+", "#", text)

    # The stored text may end inside a quoted or parenthesized name it was cut at (a quote
    # or parenthesis left open, no space after it): that name's start goes.
    cut = squeeze(expected)
    for q in "\"'(":
        at = cut.rfind(q)
        open_ = cut.count(q) % 2 == 1 if q != "(" else cut.count("(") > cut.count(")")
        if at >= 0 and open_ and not any(c.isspace() for c in cut[at:]):
            cut = cut[:at]
    return shape(cut) in shape(message)


def shows_bug(run, expected, native):
    """(True, why) when this run shows the bug, (False, why) when it does not."""
    if run.status == "setup":
        return False, "could not be set up: %s" % run.message
    if KIND == "crash":
        if run.status == "error":
            if EXPECT_ERROR and not same_error(EXPECT_ERROR, run.message):
                return False, ("failed, but not with the reported error (expected a message "
                               "containing %r): %s" % (EXPECT_ERROR, run.message[:300]))
            return True, "failed: %s" % run.message[:500]
        if run.status == "crash":
            # A panic names its cause: another panic is another bug.
            panicked = "panicked at " in run.message
            if EXPECT_ERROR and panicked and not same_error(EXPECT_ERROR, run.message):
                return False, ("crashed, but not with the reported error (expected a message "
                               "containing %r): %s" % (EXPECT_ERROR, run.message[:600]))
            return True, run.message
        if run.status == "hang":
            return False, "hung (%s) instead of failing" % run.message
        return False, "ran without error"
    if KIND == "hang":
        if run.status == "hang":
            return True, "did not finish: %s" % run.message
        return False, "finished (%s)" % run.status
    # A wrong shape inside the model that makes a later node fail: the library shows the
    # bug by failing there (the value itself is not an output it can be asked for).
    if KIND == "inconsistency" and SYMPTOM == "shape" and EXPECT_ERROR and \
            run.status == "error" and same_error(EXPECT_ERROR, run.message):
        return True, "fails downstream of the wrong shape: %s" % run.message[:500]
    if run.status != "ok":
        return False, "failed (%s) instead of showing the %s" % (run.message[:300], KIND)
    if KIND == "inconsistency":
        if expected is None:
            return False, "no reference outputs to compare with"
        # A shape bundle shows through a wrong output shape, else through values: a later node
        # may absorb the wrongly shaped value (a pool over a window one row short).
        wrong = [(n, m) for n, m in check(run.outputs, expected, native).items() if m["mismatches"]]
        for name, m in sorted(wrong, key=lambda w: SYMPTOM == "shape" and not w[1]["problem"]):
            absorbed = SYMPTOM == "shape" and not m["problem"]
            return True, "output '%s': %s%s" % (name, summarize(m), absorbed and (
                " (the wrongly shaped value inside the model reaches it through a node that "
                "keeps its shape)") or "")
        return False, "matches the expected values on every output"
    if KIND == "nan":
        for name, m in check(run.outputs, expected, native).items():
            if m.get("new_nonfinite"):
                return True, "output '%s': %d NaN/Inf where the expected value is finite" % (
                    name, m["new_nonfinite"])
        return False, "no NaN/Inf where the expected values are finite"
    if KIND == "flaky":
        first = dict(run.runs[0])
        for k, other in enumerate(run.runs[1:], start=2):
            for name, value in other:
                a, b = np.asarray(first[name]), np.asarray(value)
                if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                    return True, "output '%s' of run %d differs from run 1" % (name, k)
        return False, "identical results in %d runs" % len(run.runs)
    if KIND == "slow":
        steady = min(run.seconds[1:] or run.seconds)
        return steady >= SLOW_SECONDS, "steady-state run %.4f s (reported: %.4f s or more)" % (
            steady, SLOW_SECONDS)
    return False, "this script does not judge kind '%s'; see REPORT.md" % KIND


def ground_values(variant, model_path, inputs, runs, timeout):
    """(expected, None): the outputs of the library's own run as `variant`, or (None, None)
    when that run fails."""
    print("expected values: %s's own run as '%s' (mutagraph judged the bug against it: its "
          "reference could not run the model)" % (LIBRARY, variant))
    run = run_library(variant, model_path, inputs, runs, timeout)
    show(run, None, None)
    if run.status != "ok":
        return None, None
    return {name: np.asarray(value) for name, value in run.outputs}, None


def run_burn(timeout):
    """burn has no Python API: the bundle's repro/ project calls burn's tensor API the way
    mutagraph's interpreter did, and prints REPRODUCED or NOT REPRODUCED itself."""
    project = os.path.join(HERE, "repro", "Cargo.toml")
    if not os.path.isfile(project):
        return False, "this bundle has no repro/ project"
    cargo = shutil.which("cargo")
    if cargo is None:
        return False, "burn is a Rust library: install Rust (https://rustup.rs), then run this again"
    print("\n-- burn: cargo run --release --manifest-path repro/Cargo.toml")
    sys.stdout.flush()
    try:
        done = subprocess.run([cargo, "run", "--release", "--quiet", "--manifest-path", project],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout + 1800, text=True)
    except subprocess.TimeoutExpired:
        return False, "cargo did not finish"
    print(done.stdout)
    last = [l for l in done.stdout.splitlines() if "REPRODUCED" in l]
    if last and last[-1].startswith("REPRODUCED"):
        return True, last[-1][len("REPRODUCED: "):]
    return False, last[-1] if last else "the repro project did not run (exit %d)" % done.returncode


def without_pass(variants, model_path, inputs, runs, timeout, expected, native):
    """Runs the showing variants again with OPTIMIZER_PASS disabled: whether the bug goes
    with it, in words."""
    gone = []
    for variant in variants:
        run = run_library(variant, model_path, inputs, runs, timeout, OPTIMIZER_PASS_NAMES)
        show(run, expected, native)
        ok, why = shows_bug(run, expected, native)
        gone.append(not ok)
        print("   %s without %s %s" % (variant, OPTIMIZER_PASS,
                                       "shows it too: %s" % why if ok else "does not show it"))
    if all(gone):
        return "with %s disabled it does not show: that pass is the cause" % OPTIMIZER_PASS
    return "it shows with %s disabled too: that pass is not the whole cause" % OPTIMIZER_PASS


def verdict(reproduced, why):
    print("\n" + ("REPRODUCED: " if reproduced else "NOT REPRODUCED: ") + why)
    return 0 if reproduced else 1


def cannot_judge(why):
    """Neither verdict: the run cannot be judged (exit status 2)."""
    print("\nCANNOT JUDGE: " + why)
    return 2


def main():
    parser = argparse.ArgumentParser(description=TITLE)
    parser.add_argument("--model", help="run this ONNX file instead of %s" % MODEL)
    parser.add_argument("--inputs", help="the .npz of its inputs (default: %s, else the bundle's "
                                         "inputs.npz when the model's inputs are there)" % INPUTS)
    parser.add_argument("--timeout", type=float, help="seconds before a run is stopped")
    parser.add_argument("--recompute", action="store_true", help="compute the expected values "
                        "with onnx.reference instead of reading the ones mutagraph stored")
    args = parser.parse_args()
    model_path = os.path.abspath(args.model) if args.model else os.path.join(HERE, MODEL)
    timeout = args.timeout or (HANG_SECONDS if KIND == "hang" else TIMEOUT_SECONDS)

    print(TITLE)
    print("kind: %s (%s); library: %s; variants showing it: %s; model: %s" %
          (KIND, SYMPTOM, LIBRARY, ", ".join(SHOWING), model_path))
    if LIBRARY == "burn":
        ok, why = run_burn(timeout)
        return verdict(ok, why)
    if LIBRARY not in ("onnxruntime", "tract"):
        return verdict(False, "this script runs onnxruntime and tract; see REPORT.md")
    if not os.path.isfile(model_path):
        return verdict(False, "no model file %s" % model_path)
    other = model_path != os.path.join(HERE, MODEL)
    inputs_file = os.path.abspath(args.inputs) if args.inputs else inputs_for(model_path)
    print("inputs: %s" % inputs_file)
    inputs = load_npz(inputs_file)
    recompute = args.recompute or other
    for name, value in inputs.items():
        print("   input '%s': %s" % (name, describe(value)))
    runs = REPEAT_RUNS if KIND in ("flaky", "slow") else 1
    clean = CLEAN
    if GROUND in CLEAN and LIBRARY == "onnxruntime" and KIND in ("inconsistency", "nan"):
        # mutagraph judged the library against its own run as GROUND (the reference could
        # not run the model): that run gives the expected values here too.
        expected, native = ground_values(GROUND, model_path, inputs, runs, timeout)
        clean = [v for v in CLEAN if v != GROUND]
        if expected is None:
            return verdict(False, "%s, which gives the expected values, did not run" % GROUND)
    else:
        expected, native = expected_values(model_path, inputs, recompute)
    print("numpy %s, Python %s" % (np.__version__, sys.version.split()[0]))
    # tract's package runs one pipeline (optimized): every tract variant maps onto it.
    variants = SHOWING if LIBRARY == "onnxruntime" else SHOWING[:1]
    results = []
    for variant in variants:
        run = run_library(variant, model_path, inputs, runs, timeout)
        show(run, expected, native)
        ok, why = shows_bug(run, expected, native)
        results.append((ok, "%s: %s" % (variant, why)))
    if LIBRARY == "onnxruntime":
        for variant in clean:
            run = run_library(variant, model_path, inputs, runs, timeout)
            show(run, expected, native)
            ok, why = shows_bug(run, expected, native)
            print("   %s %s (mutagraph saw it run correctly)" %
                  (variant, "shows it too" if ok else "does not show it"))
    hits = [why for ok, why in results if ok]
    if not hits and expected is None and KIND in ("inconsistency", "nan"):
        return cannot_judge("no expected values for %s (the stored ones are %s's; "
                            "onnx.reference could not give them)" %
                            (os.path.basename(model_path), MODEL))
    if hits and OPTIMIZER_PASS and LIBRARY == "onnxruntime":
        hits.append(without_pass(variants, model_path, inputs, runs, timeout, expected, native))
    if hits:
        return verdict(True, "; ".join(hits))
    return verdict(False, "; ".join(why for _, why in results))


if __name__ == "__main__":
    sys.exit(main())
