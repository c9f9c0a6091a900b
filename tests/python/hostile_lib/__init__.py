"""The parts of `tests/python/hostile.py` (the hostile-input generator and runner), by role:

- `wire`: protobuf wire format (encode, parse, rewrite fields);
- `build`: ONNX building helpers without checks, the shared context (`Ctx`) and one
  generated input (`Out`);
- `gen_bytes`, `gen_onnx`, `gen_ops`, `gen_text`, `gen_files`: the input generators, by
  level (bytes and wire format; ONNX fields, names, graphs, tensors; attributes, allocation
  bombs, functions, types, subgraphs; text syntax; file-system oddities);
- `kinds`: the kinds, their weights and descriptions, the plan and the generation of a set;
- `classify`: the classes of a run (ok, rejected, the defects) and their signatures;
- `runner`: running one command on one input under limits, measuring it; sampling;
- `summary`: counts, examples and signatures of the runs, and the table.
"""
