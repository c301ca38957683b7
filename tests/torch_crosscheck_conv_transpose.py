#!/usr/bin/python3
"""Cross-check of PetNN's transposed convolutions (conv_transpose2d, conv_transpose3d) and bilinear /
trilinear upsampling against PyTorch in double precision, on 1 or more ranks.

    /usr/bin/python3 tests/torch_crosscheck_conv_transpose.py <build>/examples/nnrun <build>/tests/crosscheck_spatial
                     [--nsize N] [--mpiexec "..."] [-v] [--only prefix,...] [--perturb 1e-8] [--list]

The machinery is tests/torch_crosscheck_spatial.py's (same options, same checks: output, loss, input
gradient and every parameter gradient to rel. err. < 1e-10, the requested uneven rank grids, partial
batches, the perturbation self-test); this script only brings its own cases: torch.nn.ConvTranspose2d/3d
(stride, padding, output_padding, dilation, groups, bias) and torch.nn.Upsample(mode='bilinear' /
'trilinear', align_corners False and True), alone and in a small encoder-decoder.
"""

import importlib.util
import os
import sys

_spec = importlib.util.spec_from_file_location(
    'torch_crosscheck_spatial', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'torch_crosscheck_spatial.py'))
X = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(X)  # prints the skip line and exits 0 itself without torch or h5py
torch = X.torch


class LT(X.L):
    """the spatial cross-check's layer plus conv_transpose2d/3d and interpolating upsample"""

    def options(self):
        n, k, t = self.name, self.kw, self.typ
        opt = lambda key, val: ['-%s_%s' % (n, key), str(val)]  # noqa: E731
        if t in ('conv_transpose2d', 'conv_transpose3d'):
            o = ['-%s_type' % n, t] + opt('filters', k['filters']) + opt('kernel', k['kernel'])
            for key, default in (('stride', 1), ('padding', 0), ('output_padding', 0), ('dilation', 1), ('groups', 1)):
                o += opt(key, k.get(key, default))  # always given: the layer's own defaults (kernel 2, stride 2) differ
            if not k.get('bias', True):
                o += opt('bias', 0)
            return o
        if t == 'upsample' and 'mode' in k:
            o = ['-%s_type' % n, t] + opt('scale', k['scale']) + opt('mode', k['mode'])
            if k.get('align_corners', False):
                o += opt('align_corners', 1)
            return o
        return X.L.options(self)

    def module(self, shape):
        t, k = self.typ, self.kw
        if t in ('conv_transpose2d', 'conv_transpose3d'):
            cls = torch.nn.ConvTranspose2d if t == 'conv_transpose2d' else torch.nn.ConvTranspose3d
            m = cls(shape[0], k['filters'], k['kernel'], stride=k.get('stride', 1), padding=k.get('padding', 0),
                    output_padding=k.get('output_padding', 0), groups=k.get('groups', 1), bias=k.get('bias', True),
                    dilation=k.get('dilation', 1))
        elif t == 'upsample' and 'mode' in k:
            mode = k['mode'] if len(shape) == 3 else 'trilinear'
            m = torch.nn.Upsample(scale_factor=k['scale'], mode=mode, align_corners=k.get('align_corners', False))
        else:
            return X.L.module(self, shape)
        with torch.no_grad():
            out = m(torch.zeros((1,) + tuple(shape)))
        return m, tuple(out.shape[1:])


def ct(name, f, k, **kw):
    return LT(name, 'conv_transpose2d', filters=f, kernel=k, **kw)


def ct3(name, f, k, **kw):
    return LT(name, 'conv_transpose3d', filters=f, kernel=k, **kw)


def up(name, s, **kw):
    return LT(name, 'upsample', scale=s, mode='bilinear', **kw)


FLAT = X.FLAT
IN2, IN2G, IN3 = X.IN2, X.IN2G, X.IN3


def layer_cases():
    return [
        ('conv_transpose2d k2 s2', [ct('ct', 4, 2, stride=2), FLAT], IN2, {}),
        ('conv_transpose2d k3 s1 p1 no bias', [ct('ct', 3, 3, padding=1, bias=False), FLAT], IN2, {}),
        ('conv_transpose2d k3 s2 p1 op1', [ct('ct', 4, 3, stride=2, padding=1, output_padding=1), FLAT], IN2, {}),
        ('conv_transpose2d k4 s2 p1', [ct('ct', 2, 4, stride=2, padding=1), FLAT], IN2, {}),
        ('conv_transpose2d k3 s3 op2', [ct('ct', 3, 3, stride=3, output_padding=2), FLAT], IN2, {}),
        ('conv_transpose2d k3 s2 d2 p2 op1', [ct('ct', 3, 3, stride=2, dilation=2, padding=2, output_padding=1), FLAT],
         IN2, {}),
        ('conv_transpose2d k1 s1 d3 op2 (output padding < dilation)',
         [ct('ct', 3, 1, stride=1, dilation=3, output_padding=2), FLAT], IN2, {}),
        ('conv_transpose2d k5 s1 p3 (padding crops)', [ct('ct', 2, 5, padding=3), FLAT], IN2, {}),
        ('conv_transpose2d groups 2', [ct('ct', 6, 3, stride=2, padding=1, groups=2), FLAT], IN2G, {}),
        ('conv_transpose2d depthwise (groups 4)', [ct('ct', 4, 2, stride=2, groups=4), FLAT], IN2G, {}),
        ('conv_transpose2d with spatial output (mse on the DMDA)', [ct('ct', 2, 2, stride=2)], IN2, {}),
        ('conv_transpose2d partial batch', [ct('ct', 3, 3, stride=2, padding=1), FLAT], IN2, {'capacity': 7}),
        ('conv_transpose3d k2 s2', [ct3('ct', 3, 2, stride=2), FLAT], IN3, {}),
        ('conv_transpose3d k3 s2 p1 op1 no bias', [ct3('ct', 2, 3, stride=2, padding=1, output_padding=1, bias=False),
                                                   FLAT], IN3, {}),
        ('conv_transpose3d k3 s1 p1 groups 2', [ct3('ct', 4, 3, padding=1, groups=2), FLAT], IN3, {}),
        ('upsample bilinear x2', [up('up', 2), FLAT], IN2, {}),
        ('upsample bilinear x3', [up('up', 3), FLAT], IN2, {}),
        ('upsample bilinear x2 align_corners', [up('up', 2, align_corners=True), FLAT], IN2, {}),
        ('upsample bilinear x3 align_corners partial batch', [up('up', 3, align_corners=True), FLAT], IN2,
         {'capacity': 6}),
        ('upsample trilinear x2 3-d', [up('up', 2), FLAT], IN3, {}),
        ('upsample trilinear x3 align_corners 3-d', [up('up', 3, align_corners=True), FLAT], IN3, {}),
        ('encoder-decoder (pool, conv_transpose, bilinear)',
         [X.conv('c1', 4, 3, padding=1), X.L('r1', 'relu'), X.L('p1', 'maxpool2d', kernel=2),
          ct('ct', 3, 2, stride=2), X.L('r2', 'tanh'), X.L('p2', 'maxpool2d', kernel=2), up('up', 2),
          ct('ct2', 2, 3, stride=2, padding=1, output_padding=1), FLAT], (2, 12, 16), {}),
        ('encoder-decoder 3-d (pool, conv_transpose)',
         [X.conv3('c1', 3, 3, padding=1), X.L('p1', 'maxpool3d', kernel=2), ct3('ct', 2, 2, stride=2), up('up', 2),
          FLAT], (2, 8, 6, 8), {}),
    ]


X.layer_cases = layer_cases
X.train_cases = lambda: []

if __name__ == '__main__':
    sys.exit(X.main(sys.argv[1:]))
