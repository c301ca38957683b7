#!/usr/bin/python3
"""Cross-check of PetNN's Fourier neural operator layers (spectral_conv2d, spectral_conv3d) against a
torch.fft implementation of the reference FNO layer (neuraloperator's SpectralConv2d/SpectralConv3d
of fourier_2d.py / fourier_3d.py, plus the FNO block's pointwise nn.Conv2d/Conv3d(C_in, C_out, 1)),
in double precision, on 1 or more ranks.

    /usr/bin/python3 tests/torch_crosscheck_fno.py <build>/examples/nnrun <build>/tests/crosscheck_spatial
                     [--nsize N] [--mpiexec "mpiexec --oversubscribe"] [--grid2 3x1] [--grid3 1x1x3]
                     [-v] [--keep] [--only prefix1,...] [--rtol 1e-10] [--list] [--perturb 1e-8]

The machinery (checkpoints and data written with h5py, the run of the helper under mpiexec on an
uneven rank grid, the comparison of output, loss, input gradient and every parameter gradient, the
Adam training case, the --perturb self-test) is tests/torch_crosscheck_spatial.py's; this script adds
the two layer types and their cases. The PyTorch module stores the complex weights as real tensors
with a trailing dimension of 2 (torch.view_as_real of the reference's cfloat weights), which is
PetNN's layout, so the state_dict loads unchanged: <layer>.weights1.. and <layer>.w.weight/bias.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_crosscheck_spatial as tcs  # noqa: E402

torch = tcs.torch


class SpectralConv(torch.nn.Module):
    """the reference SpectralConv2d/3d (+ the pointwise 1x1 convolution w when linear)"""

    def __init__(self, nd, cin, cout, modes, linear):
        super().__init__()
        self.nd, self.modes = nd, tuple(modes)
        scale = 1.0 / (cin * cout)
        for q in range(2 if nd == 2 else 4):
            w = scale * torch.rand(cin, cout, *modes, 2)
            self.register_parameter('weights%d' % (q + 1), torch.nn.Parameter(w))
        self.w = (torch.nn.Conv2d if nd == 2 else torch.nn.Conv3d)(cin, cout, 1) if linear else None
        self.cout = cout

    def forward(self, x):
        dims = tuple(range(-self.nd, 0))
        grid = x.shape[-self.nd:]
        x_ft = torch.fft.rfftn(x, dim=dims)
        out_ft = torch.zeros(x.shape[0], self.cout, *x_ft.shape[2:], dtype=x_ft.dtype)
        m = self.modes
        eq = 'bixy,ioxy->boxy' if self.nd == 2 else 'bixyz,ioxyz->boxyz'
        if self.nd == 2:
            corners = [(slice(None, m[0]),), (slice(-m[0], None),)]
            last = (slice(None, m[1]),)
        else:
            corners = [(slice(None, m[0]), slice(None, m[1])), (slice(-m[0], None), slice(None, m[1])),
                       (slice(None, m[0]), slice(-m[1], None)), (slice(-m[0], None), slice(-m[1], None))]
            last = (slice(None, m[2]),)
        for q, c in enumerate(corners):
            idx = (slice(None), slice(None)) + c + last
            wq = torch.view_as_complex(getattr(self, 'weights%d' % (q + 1)))
            out_ft[idx] = torch.einsum(eq, x_ft[idx], wq)
        y = torch.fft.irfftn(out_ft, s=grid, dim=dims)
        return y + self.w(x) if self.w is not None else y


class SL(tcs.L):
    """a layer of the cases: spectral_conv2d/3d here, everything else as in torch_crosscheck_spatial"""

    def options(self):
        if self.typ not in ('spectral_conv2d', 'spectral_conv3d'):
            return super().options()
        n, k = self.name, self.kw
        o = ['-%s_type' % n, self.typ, '-%s_filters' % n, str(k['filters']),
             '-%s_modes' % n, ','.join(map(str, k['modes']))]
        if not k.get('linear', True):
            o += ['-%s_linear' % n, '0']
        if not k.get('transposed', True):
            o += ['-%s_fftw_transposed' % n, '0']
        return o

    def module(self, shape):
        if self.typ not in ('spectral_conv2d', 'spectral_conv3d'):
            return super().module(shape)
        nd = 2 if self.typ == 'spectral_conv2d' else 3
        assert len(shape) == nd + 1
        k = self.kw
        m = SpectralConv(nd, shape[0], k['filters'], k['modes'], k.get('linear', True))
        return m, (k['filters'],) + tuple(shape[1:])


def sc2(name, f, modes, **kw):
    return SL(name, 'spectral_conv2d', filters=f, modes=modes, **kw)


def sc3(name, f, modes, **kw):
    return SL(name, 'spectral_conv3d', filters=f, modes=modes, **kw)


def conv1(name, f, nd=2):
    return SL(name, 'conv2d' if nd == 2 else 'conv3d', filters=f, kernel=1, padding=0)


IN2 = (3, 9, 11)     # (C,H,W): odd sizes, 11 = 4+4+3 over 3 ranks, 9 = 5+4 over 2x2
IN2E = (2, 8, 10)    # even sizes: the Nyquist row and column exist
IN3 = (2, 7, 5, 6)   # (C,D,H,W): 7 = 3+2+2 over 3 ranks along z


def fno(nd, width, modes, inshape):
    """the FNO: lift (1x1 conv) -> 2 x [spectral_conv + gelu] -> projection (1x1 conv)"""
    sc = sc2 if nd == 2 else sc3
    return [conv1('fc0', width, nd), sc('conv0', width, modes), SL('act0', 'gelu'), sc('conv1', width, modes),
            SL('act1', 'gelu'), conv1('fc1', 1, nd)]


def layer_cases():
    flat = SL('flat', 'spatial_flatten')
    return [
        ('spectral_conv2d modes 4,3', [sc2('sc', 4, (4, 3))], IN2, {}),
        ('spectral_conv2d modes 2,6 (last column of the half spectrum)', [sc2('sc', 2, (2, 6))], IN2, {}),
        ('spectral_conv2d even grid modes 4,6 (Nyquist)', [sc2('sc', 3, (4, 6))], IN2E, {}),
        ('spectral_conv2d no linear path, flattened', [sc2('sc', 2, (3, 2), linear=False), flat], IN2, {}),
        ('spectral_conv2d partial batch', [sc2('sc', 2, (3, 3))], IN2, {'capacity': 6}),
        ('spectral_conv3d modes 3,2,4', [sc3('sc', 3, (3, 2, 4))], IN3, {}),
        ('spectral_conv3d modes 1,1,1 no linear path', [sc3('sc', 2, (1, 1, 1), linear=False)], IN3, {}),
        ('spectral_conv2d slab-layout spectrum', [sc2('sc', 3, (4, 6), transposed=False)], IN2E, {}),
        ('spectral_conv3d slab-layout spectrum', [sc3('sc', 3, (3, 2, 4), transposed=False)], IN3, {}),
        ('fno 2-d (lift, 2 x [spectral_conv2d + gelu], projection)', fno(2, 4, (3, 4), IN2E), IN2E, {}),
        ('fno 3-d (lift, 2 x [spectral_conv3d + gelu], projection)', fno(3, 3, (2, 2, 3), IN3), IN3, {}),
    ]


def train_cases():
    # 3 full-batch Adam steps of an FNO classifier (cross-entropy after global average pooling)
    return [('fno training (Adam, 3 steps)', fno(2, 4, (3, 4), IN2E)[:-1] + [conv1('fc1', 3),
             SL('gap', 'global_avgpool')], IN2E)]


if __name__ == '__main__':
    tcs.layer_cases = layer_cases
    tcs.train_cases = train_cases
    sys.exit(tcs.main(sys.argv[1:]))
