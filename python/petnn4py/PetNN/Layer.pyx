# NNLayer: one layer of a network (include/petnn.h, src/layer/, layers/)

# keyword -> (setter, kind): Layer.set(units=128, bias=False) calls NNLayerDenseSetUnits, NNLayerDenseSetBias.
# A setter that does not apply to the layer's type is a no-op, as in C (PetscTryMethod).
cdef dict LAYER_SETTERS = {
    'units': 'dense_units', 'bias': 'bias', 'slope': 'slope', 'rate': 'rate',
    'momentum': 'momentum', 'epsilon': 'epsilon', 'affine': 'affine', 'groups': 'groups',
    'filters': 'filters', 'kernel_size': 'kernel_size', 'stride': 'stride', 'padding': 'padding',
    'periodic': 'periodic', 'dilation': 'dilation', 'scale': 'scale', 'mode': 'mode',
    'modes': 'modes', 'time': 'time', 'steps': 'steps',
}


cdef class Layer(Object):
    """A layer (PetNN's ``NNLayer``); get one from ``NN.addLayer`` or ``NN.getLayer``."""

    cdef PetLayer layer
    cdef object net  # the NN it came from (NN.addLayer, getLayer, getLayers), for its parameter slices

    def __cinit__(self):
        self.obj = <PetscObject *>&self.layer
        self.layer = NULL

    def getParameters(self):
        """A numpy view (no copy) of this layer's parameters in its network's parameter Vec (NN.getLayerParameters)."""
        if self.net is None:
            raise RuntimeError("a layer obtained from a network (NN.addLayer, getLayer, getLayers) knows its parameters")
        return self.net.getLayerParameters(self.getName())

    def getGradient(self):
        """A numpy view (no copy) of this layer's slice of its network's gradient Vec."""
        if self.net is None:
            raise RuntimeError("a layer obtained from a network (NN.addLayer, getLayer, getLayers) knows its gradient")
        return self.net.getLayerGradient(self.getName())

    def getType(self):
        cdef const char *t = NULL
        CHKERR(NNLayerGetType(self.layer, &t))
        return bytes2str(t)

    def getOptionsPrefix(self):
        cdef const char *p = NULL
        CHKERR(PetscObjectGetOptionsPrefix(<PetscObject>self.layer, &p))
        return bytes2str(p)

    def getInputShape(self):
        cdef NNShape s
        CHKERR(NNLayerGetInputShape(self.layer, &s))
        return shape2tuple(&s)

    def getOutputShape(self):
        cdef NNShape s
        CHKERR(NNLayerGetOutputShape(self.layer, &s))
        return shape2tuple(&s)

    def getNumParameters(self):
        cdef PetscInt n = 0
        CHKERR(NNLayerGetNumParameters(self.layer, &n))
        return n

    def view(self, Viewer viewer=None):
        cdef PetscViewer v = NULL if viewer is None else viewer.vwr
        CHKERR(NNLayerView(self.layer, v))

    def setInputs(self, inputs):
        """Graph networks: the activations this layer reads (layer names, "input", "split:0", ...)."""
        cdef const char *names[16]
        enc = [str2bytes(i) for i in inputs]
        if len(enc) > 16:
            raise ValueError("at most 16 inputs")
        for i, b in enumerate(enc):
            names[i] = b
        CHKERR(NNLayerSetInputs(self.layer, len(enc), names))

    def addLayer(self, layer_type, name, **options):
        """Residual and ODE blocks: appends an inner layer."""
        cdef Layer child = Layer()
        t = self.getType()
        if t == 'ode':
            CHKERR(NNLayerODEAddLayer(self.layer, str2bytes(layer_type), str2bytes(name), &child.layer))
        elif t == 'residual':
            CHKERR(NNLayerResidualAddLayer(self.layer, str2bytes(layer_type), str2bytes(name), &child.layer))
        else:
            raise TypeError("layer of type %s has no inner layers (residual and ode do)" % t)
        CHKERR(PetscObjectReference(<PetscObject>child.layer))
        if options:
            child.set(**options)
        return child

    def set(self, **options):
        """Typed setters by keyword, e.g. ``set(units=128, bias=False)`` or ``set(filters=16, kernel_size=3)``.

        Keywords: units, bias, slope, rate, momentum, epsilon, affine, groups, filters, kernel_size,
        stride, padding, periodic, dilation, scale, mode, modes, time, steps. A keyword that does not
        apply to the layer's type is ignored, as PETSc's typed setters are.
        """
        cdef PetLayer l = self.layer
        cdef PetscInt modes[4]
        for key, value in options.items():
            if key not in LAYER_SETTERS:
                raise TypeError("unknown layer option %r; valid: %s" % (key, ", ".join(sorted(LAYER_SETTERS))))
            if key == 'units':
                CHKERR(NNLayerDenseSetUnits(l, value))
            elif key == 'bias':
                CHKERR(NNLayerDenseSetBias(l, asbool(value)))
                CHKERR(NNLayerConvSetBias(l, asbool(value)))
            elif key == 'slope':
                CHKERR(NNLayerLeakyReLUSetSlope(l, value))
            elif key == 'rate':
                CHKERR(NNLayerDropoutSetRate(l, value))
            elif key == 'momentum':
                CHKERR(NNLayerBatchNormSetMomentum(l, value))
            elif key == 'epsilon':
                CHKERR(NNLayerBatchNormSetEpsilon(l, value))
                CHKERR(NNLayerNormSetEpsilon(l, value))
            elif key == 'affine':
                CHKERR(NNLayerNormSetAffine(l, asbool(value)))
            elif key == 'groups':
                CHKERR(NNLayerGroupNormSetGroups(l, value))
                CHKERR(NNLayerConvSetGroups(l, value))
            elif key == 'filters':
                CHKERR(NNLayerConvSetFilters(l, value))
                CHKERR(NNLayerSpectralConvSetFilters(l, value))
            elif key == 'kernel_size':
                CHKERR(NNLayerConvSetKernelSize(l, value))
                CHKERR(NNLayerPoolSetKernelSize(l, value))
            elif key == 'stride':
                CHKERR(NNLayerConvSetStride(l, value))
                CHKERR(NNLayerPoolSetStride(l, value))
            elif key == 'padding':
                CHKERR(NNLayerConvSetPadding(l, value))
                CHKERR(NNLayerPoolSetPadding(l, value))
            elif key == 'periodic':
                CHKERR(NNLayerConvSetPeriodic(l, asbool(value)))
            elif key == 'dilation':
                CHKERR(NNLayerConvSetDilation(l, value))
            elif key == 'scale':
                CHKERR(NNLayerUpsampleSetScale(l, value))
            elif key == 'mode':
                CHKERR(NNLayerUpsampleSetMode(l, str2bytes(value)))
            elif key == 'modes':
                value = tuple(value)
                for i, m in enumerate(value[:4]):
                    modes[i] = m
                CHKERR(NNLayerSpectralConvSetModes(l, len(value[:4]), modes))
            elif key == 'time':
                CHKERR(NNLayerODESetTime(l, value))
            elif key == 'steps':
                CHKERR(NNLayerODESetSteps(l, value))
        return self

    def addParameter(self, name, shape):
        """Python layer types, in their setUp(): declares a trainable tensor of this shape."""
        cdef PetscInt dims[6]
        shape = tuple(shape)
        if not 1 <= len(shape) <= 6:
            raise ValueError("tensor %s: give 1 to 6 dimensions" % name)
        for i, d in enumerate(shape):
            dims[i] = d
        CHKERR(NNLayerAddTensor(self.layer, str2bytes(name), NN_TENSOR_PARAM, len(shape), dims))
