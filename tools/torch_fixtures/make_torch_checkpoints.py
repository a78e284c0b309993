#!/usr/bin/python3
"""Writes the PyTorch checkpoint test files tests/data/torch/ with Debian's python3-torch.

    /usr/bin/python3 tools/torch_fixtures/make_torch_checkpoints.py tests/data/torch

* state_dict.pt: torch.save of an OrderedDict as model.state_dict() gives it (with its
  _metadata), tensors of every float dtype, an nn.Parameter, two views sharing one storage (one
  at an offset), a scalar and an empty tensor; state_dict.json lists each tensor's dtype, shape
  and values (as float64) for the test to compare with.
* protocol4.pt: the same dict pickled with protocol 4 (FRAME, MEMOIZE, SHORT_BINUNICODE).
* hostile-*.pt: archives laid out as torch.save's whose data.pkl tries to run code when
  unpickled (os.system, builtins.eval / exec, subprocess.Popen, a __reduce__ object, a global
  reached by STACK_GLOBAL, getattr chains): Warden must refuse each, naming the global, and run
  nothing. (Their payload would only touch a file; nothing here is executed by this script.)
* noncontiguous.pt: a transposed tensor saved as it is (Warden refuses it by name).
"""

import collections
import io
import json
import os
import pickle
import sys
import zipfile

import torch


def save(obj, path, protocol=2):
    torch.save(obj, path, pickle_protocol=protocol)


def tensors():
    sd = collections.OrderedDict()
    sd["layer.weight"] = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 8 - 0.5
    sd["layer.bias"] = torch.tensor([1.5, -2.25, 3.0], dtype=torch.float32)
    sd["half"] = torch.tensor([[0.5, -1.0], [2.0, 65504.0]], dtype=torch.float16)
    sd["bf16"] = torch.tensor([1.0, -3.5, 1e-3], dtype=torch.bfloat16)
    sd["double"] = torch.tensor([1.0 / 3.0], dtype=torch.float64)
    sd["ids"] = torch.tensor([7, -1, 2**40], dtype=torch.int64)
    sd["param"] = torch.nn.Parameter(torch.full((2, 2), 0.25))
    base = torch.arange(10, dtype=torch.float32)
    sd["view.offset"] = base[2:8].view(2, 3)  # shares base's storage, at an offset
    sd["view.whole"] = base
    sd["scalar"] = torch.tensor(4.5)
    sd["empty"] = torch.zeros(0, 3)
    meta = collections.OrderedDict([("", {"version": 1}), ("layer", {"version": 1})])
    sd._metadata = meta  # what model.state_dict() carries, pickled through BUILD
    return sd


def hostile_pickles():
    class Reduce:
        def __init__(self, fn, args):
            self.fn, self.args = fn, args

        def __reduce__(self):
            return self.fn, self.args

    import builtins
    import subprocess
    out = {
        "hostile-os-system.pt": pickle.dumps(Reduce(os.system, ("touch /tmp/warden-pwned",)), protocol=2),
        "hostile-builtins-eval.pt": pickle.dumps(Reduce(builtins.eval, ("1+1",)), protocol=2),
        "hostile-builtins-exec.pt": pickle.dumps(Reduce(builtins.exec, ("import os",)), protocol=4),
        "hostile-subprocess.pt": pickle.dumps(Reduce(subprocess.Popen, (["true"],)), protocol=2),
        "hostile-getattr.pt": pickle.dumps(Reduce(builtins.getattr, (str, "join")), protocol=2),
        # An OrderedDict whose entry is built by calling os.system: the state dict's own globals
        # come first, the hostile one inside.
        "hostile-in-dict.pt": pickle.dumps(collections.OrderedDict(
            [("w", Reduce(os.system, ("touch /tmp/warden-pwned",)))]), protocol=2),
    }
    return out


def write_archive(path, pkl):
    # torch.save's layout: <name>/data.pkl, <name>/version, stored entries.
    name = os.path.splitext(os.path.basename(path))[0]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", pkl)
        z.writestr(f"{name}/version", "3\n")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    sd = tensors()
    save(sd, os.path.join(out, "state_dict.pt"))
    save(sd, os.path.join(out, "protocol4.pt"), protocol=4)
    expect = {k: {"dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape),
                  "values": v.detach().double().flatten().tolist()} for k, v in sd.items()}
    with open(os.path.join(out, "state_dict.json"), "w", encoding="utf-8") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")
    save(collections.OrderedDict([("t", torch.arange(6, dtype=torch.float32).reshape(2, 3).t())]),
         os.path.join(out, "noncontiguous.pt"))
    for name, pkl in hostile_pickles().items():
        write_archive(os.path.join(out, name), pkl)


if __name__ == "__main__":
    main()
