"""The Python code blocks of tutorials/16-python.md run, in order, in one namespace: the tutorial cannot go stale."""
import os
import re

import numpy as np
from petsc4py import PETSc

TUTORIAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tutorials", "16-python.md")


def test_tutorial_16_code_blocks_run(comm):
    blocks = re.findall(r"```python\n(.*?)```", open(TUTORIAL).read(), re.S)
    assert len(blocks) >= 3
    namespace = {"np": np, "__name__": "tutorial16"}
    for i, code in enumerate(blocks):
        exec(compile(code, "%s, block %d" % (TUTORIAL, i + 1), "exec"), namespace)
    net = namespace["net"]
    assert net.getBatchSize() == 1  # the last block's setBatchSize(1) ran on the first block's network
    assert net.getLayer("fc2").getOutputShape() == (3,)
    for v in namespace.values():  # the blocks' functions hold the namespace: a cycle, freed here, not at exit
        if isinstance(v, PETSc.Object):
            v.destroy()
    namespace.clear()
