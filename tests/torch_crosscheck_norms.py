#!/usr/bin/python3
"""Cross-check of PetNN's normalization layers (group_norm, instance_norm, layer_norm) and losses (l1,
huber, rel_l2, bce_with_logits, on sequential and on spatial DMDA outputs) against PyTorch in double
precision, on 1 or more ranks.

    /usr/bin/python3 tests/torch_crosscheck_norms.py <build>/examples/nnrun [<build>/tests/crosscheck_spatial]
                     [--nsize N] [--mpiexec "mpiexec --oversubscribe"] [-v] [--only prefix,...] [--rtol 1e-10]

It runs the machinery of tests/torch_crosscheck_spatial.py (same helper program, checkpoints,
data files, rank grids, decomposition check and report lines) on its own cases: PyTorch modules
for the new layer types and losses are added to that script's layer and loss tables here.
Reference modules:
  group_norm     torch.nn.GroupNorm(groups, C, eps, affine)
  instance_norm  torch.nn.InstanceNorm2d/3d(C, eps, affine)   (track_running_stats=False)
  layer_norm     torch.nn.LayerNorm(C, eps, elementwise_affine) on flat features; on (C,H,W) and
                 (C,D,H,W) samples the same LayerNorm(C) on the channels-last permutation
  l1             torch.nn.functional.l1_loss;  huber  huber_loss(delta=0.7, -nn_loss_huber_delta 0.7)
  rel_l2         mean over the samples of ||y_i - t_i||_2 / ||t_i||_2 (neuraloperator's LpLoss)
  bce_with_logits  binary_cross_entropy_with_logits with targets uniform in [0, 1]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_crosscheck_spatial as X  # noqa: E402  (prints the skip line and exits 0 without torch)

torch, np = X.torch, X.np
HUBER_DELTA = 0.7


class ChannelLayerNorm(torch.nn.Module):
    """torch.nn.LayerNorm(C) over the channels of every position of (N, C, ...) tensors: the
    channels-last permutation, layer_norm over the last dimension, and back"""

    def __init__(self, C, eps, affine):
        super().__init__()
        self.C, self.eps = C, eps
        self.weight = torch.nn.Parameter(torch.ones(C)) if affine else None
        self.bias = torch.nn.Parameter(torch.zeros(C)) if affine else None

    def forward(self, x):
        d = x.dim()
        y = torch.nn.functional.layer_norm(x.permute(0, *range(2, d), 1), (self.C,), self.weight, self.bias, self.eps)
        return y.permute(0, d - 1, *range(1, d - 1))


class NL(X.L):
    """a layer of the new types (others: the spatial script's table)"""

    def options(self):
        n, k, t = self.name, self.kw, self.typ
        if t not in ('group_norm', 'instance_norm', 'layer_norm'):
            return X.L.options(self)
        o = ['-%s_type' % n, t, '-%s_eps' % n, repr(k.get('eps', 1e-5)), '-%s_affine' % n, str(int(k['affine']))]
        if t == 'group_norm':
            o += ['-%s_groups' % n, str(k['groups'])]
        return o

    def module(self, shape):
        t, k = self.typ, self.kw
        if t not in ('group_norm', 'instance_norm', 'layer_norm'):
            return X.L.module(self, shape)
        eps, aff = k.get('eps', 1e-5), k['affine']
        if t == 'group_norm':
            return torch.nn.GroupNorm(k['groups'], shape[0], eps=eps, affine=aff), shape
        if t == 'instance_norm':
            cls = {2: torch.nn.InstanceNorm1d, 3: torch.nn.InstanceNorm2d, 4: torch.nn.InstanceNorm3d}[len(shape)]
            return cls(shape[0], eps=eps, affine=aff), shape
        if t == 'layer_norm':
            if len(shape) == 1:
                return torch.nn.LayerNorm(shape[0], eps=eps, elementwise_affine=aff), shape
        return ChannelLayerNorm(shape[0], eps, aff), shape


_randomize = X.randomize


def randomize(model):
    _randomize(model)
    for m in model.modules():
        if isinstance(m, (torch.nn.GroupNorm, torch.nn.modules.instancenorm._InstanceNorm, torch.nn.LayerNorm,
                          ChannelLayerNorm)) and getattr(m, 'weight', None) is not None:
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)


_make_data, _torch_loss, _net_options = X.make_data, X.torch_loss, X.net_options


def make_data(rng, inshape, outshape, loss, n):
    if loss in ('l1', 'huber', 'rel_l2'):
        return rng.standard_normal((n,) + tuple(inshape)), rng.standard_normal((n,) + tuple(outshape))
    if loss == 'bce_with_logits':
        return 2 * rng.standard_normal((n,) + tuple(inshape)), rng.uniform(0, 1, (n,) + tuple(outshape))
    return _make_data(rng, inshape, outshape, loss, n)


def torch_loss(loss, out, y):
    F, t = torch.nn.functional, torch.from_numpy(y)
    if loss == 'l1':
        return F.l1_loss(out, t)
    if loss == 'huber':
        return F.huber_loss(out, t, delta=HUBER_DELTA)
    if loss == 'rel_l2':
        n = out.shape[0]
        return torch.mean(torch.norm((out - t).reshape(n, -1), 2, 1) / torch.norm(t.reshape(n, -1), 2, 1))
    if loss == 'bce_with_logits':
        return F.binary_cross_entropy_with_logits(out, t)
    return _torch_loss(loss, out, y)


def net_options(layers, loss):
    o = _net_options(layers, loss)
    return o + ['-nn_loss_huber_delta', repr(HUBER_DELTA)] if loss == 'huber' else o


def layer_cases():
    gn = lambda G, **kw: NL('gn', 'group_norm', **dict(dict(groups=G, affine=True, eps=1e-3), **kw))  # noqa: E731
    inn = lambda **kw: NL('inn', 'instance_norm', **dict(dict(affine=False), **kw))  # noqa: E731
    ln = lambda **kw: NL('ln', 'layer_norm', **dict(dict(affine=True), **kw))  # noqa: E731
    # a convolution followed by a normalization of single channels has no bias: its gradient would be zero
    # up to rounding
    c2 = lambda f=4, bias=True: X.conv('conv', f, 3, padding=1, bias=bias)  # noqa: E731
    c3 = lambda f=4, bias=True: X.conv3('conv', f, 3, padding=1, bias=bias)  # noqa: E731
    fc = lambda name, u: NL(name, 'dense', units=u)  # noqa: E731
    FLAT, IN2, IN3 = X.FLAT, X.IN2, X.IN3
    cases = [
        ('group_norm 2 groups', [c2(), gn(2), FLAT], IN2, {}),
        ('group_norm 1 group, no affine', [c2(), gn(1, affine=False), FLAT], IN2, {}),
        ('group_norm 4 groups, partial batch', [c2(bias=False), gn(4, eps=1e-5), FLAT], IN2, {'capacity': 7}),
        ('group_norm 3-d', [c3(), gn(2), FLAT], IN3, {}),
        ('group_norm on dense features', [FLAT, fc('fc1', 8), gn(4), NL('th', 'tanh'), fc('fc2', 3)], IN2, {}),
        ('instance_norm', [c2(bias=False), inn(), FLAT], IN2, {}),
        ('instance_norm affine', [c2(bias=False), inn(affine=True, eps=1e-3), FLAT], IN2, {'mode': 'eval'}),
        ('instance_norm 3-d affine, partial batch', [c3(bias=False), inn(affine=True), FLAT], IN3, {'capacity': 5}),
        ('layer_norm over channels', [c2(), ln(), FLAT], IN2, {}),
        ('layer_norm over channels, no affine, partial batch', [c2(), ln(affine=False), FLAT], IN2, {'capacity': 6}),
        ('layer_norm over channels 3-d', [c3(), ln(eps=1e-3), FLAT], IN3, {}),
        ('layer_norm on dense features', [FLAT, fc('fc1', 8), ln(), NL('th', 'tanh'), fc('fc2', 3)], IN2, {}),
        ('group_norm with spatial output (mse on the DMDA)', [c2(), gn(2)], IN2, {}),
    ]
    for loss in ('l1', 'huber', 'rel_l2', 'bce_with_logits'):
        cases += [
            ('%s loss, sequential output' % loss, [c2(2), FLAT], IN2, {'loss': loss}),
            ('%s loss, spatial output' % loss, [c2(2)], IN2, {'loss': loss}),
            ('%s loss, spatial output, partial batch' % loss, [c2(2)], IN2, {'loss': loss, 'capacity': 6}),
            ('%s loss, spatial 3-d output' % loss, [c3(2)], IN3, {'loss': loss}),
        ]
    return cases


X.randomize, X.make_data, X.torch_loss, X.net_options = randomize, make_data, torch_loss, net_options
X.layer_cases, X.train_cases = layer_cases, lambda: []

if __name__ == '__main__':
    sys.exit(X.main(sys.argv[1:]))
