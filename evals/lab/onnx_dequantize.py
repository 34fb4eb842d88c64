"""The packaged cross-encoder's int8 ONNX graph with its weights dequantised back to fp32.

The packaged file quantises each MatMul's input on the fly (DynamicQuantizeLinear: one scale per
tensor, so over the whole batch), which makes a pair's score depend on its batch-mates. Here every
`DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(scale)` chain becomes one fp32 MatMul on
(W_q - zero_point) * scale: the same weights, no activation quantisation. No hub download: the
weights are the installed ones. Used by rerank_speed.py to time lever d (fp32) against int8.
"""

from __future__ import annotations

from pathlib import Path


def dequantized(path: Path) -> bytes:
    """The serialised fp32 model (onnxruntime.InferenceSession takes the bytes)."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    g = model.graph
    init = {i.name: i for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    consumers: dict[str, list] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    replaced, dropped = [], set()
    for n in g.node:
        if n.op_type != "MatMulInteger":
            continue
        xq, wq, _xzp, wzp = n.input
        x = producer[xq].input[0]                     # the float input of DynamicQuantizeLinear
        cast = consumers[n.output[0]][0]
        mul = consumers[cast.output[0]][0]
        scale = producer[next(i for i in mul.input if i != cast.output[0])]
        w_scale = next(i for i in scale.input if i in init)
        w = (numpy_helper.to_array(init[wq]).astype(np.float32)
             - numpy_helper.to_array(init[wzp]).astype(np.float32)) * numpy_helper.to_array(init[w_scale])
        g.initializer.append(numpy_helper.from_array(w.astype(np.float32), f"{wq}_fp32"))
        replaced.append((n, helper.make_node("MatMul", [x, f"{wq}_fp32"], [mul.output[0]], name=f"{n.name}_fp32")))
        dropped |= {id(n), id(cast), id(mul)}
    nodes = []
    for n in g.node:
        nodes += [new for old, new in replaced if old is n]
        if id(n) not in dropped:
            nodes.append(n)
    outputs = {o.name for o in g.output}
    while True:                                       # drop what now feeds nothing (the quantisers)
        used = outputs | {i for n in nodes for i in n.input}
        live = [n for n in nodes if any(o in used for o in n.output)]
        if len(live) == len(nodes):
            break
        nodes = live
    used = {i for n in nodes for i in n.input}
    inits = [i for i in g.initializer if i.name in used]
    del g.node[:], g.initializer[:]
    g.node.extend(nodes)
    g.initializer.extend(inits)
    onnx.checker.check_model(model)
    return model.SerializeToString()
