/* ONNX initializers (TensorProto) as PetscScalar arrays: float and double, raw_data (little-endian) or typed fields;
   external data is refused, NaN and Inf are refused. */
#if defined(PETNN_HAVE_ONNX)
#include "onnximpl.h"
#include <string.h>

/* the initializer of that name, or NULL */
PetscErrorCode NNONNXGetInitializer(NNONNX *o, const char name[], const Onnx__TensorProto **t)
{
  PetscFunctionBegin;
  *t = NULL;
  for (size_t i = 0; i < o->g->n_initializer && !*t; i++) {
    PetscBool same;
    PetscCall(PetscStrcmp(o->g->initializer[i]->name, name, &same));
    if (same) *t = o->g->initializer[i];
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNONNXTensorSize(NNONNX *o, const Onnx__TensorProto *t, PetscInt *n)
{
  PetscFunctionBegin;
  *n = 1;
  for (size_t d = 0; d < t->n_dims; d++) {
    PetscCheck(t->dims[d] >= 0 && t->dims[d] <= PETSC_MAX_INT / PetscMax(*n, 1), o->comm, PETSC_ERR_FILE_UNEXPECTED, "ONNX initializer %s has dimension %d of size %lld: not a valid size", t->name, (int)d, (long long)t->dims[d]);
    *n *= (PetscInt)t->dims[d];
  }
  PetscFunctionReturn(0);
}

/* reads the n entries of a float or double tensor into v (allocated) */
static PetscErrorCode NNONNXTensorRead(NNONNX *o, const Onnx__TensorProto *t, PetscInt n, PetscScalar v[])
{
  const int32_t type = t->data_type;
  const size_t  esize = type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? sizeof(float) : sizeof(double);

  PetscFunctionBegin;
  if (t->has_raw_data) { /* little-endian, as the x86/arm hosts we build on */
    PetscCheck(t->raw_data.len == (size_t)n * esize, o->comm, PETSC_ERR_FILE_UNEXPECTED, "ONNX initializer %s: raw_data has %zu bytes, its shape needs %zu (truncated or corrupt file?)", t->name, t->raw_data.len, (size_t)n * esize);
    for (PetscInt i = 0; i < n; i++) {
      if (esize == sizeof(float)) {
        float f;
        memcpy(&f, t->raw_data.data + (size_t)i * esize, esize);
        v[i] = (PetscScalar)f;
      } else memcpy(&v[i], t->raw_data.data + (size_t)i * esize, esize);
    }
  } else if (type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT) {
    PetscCheck(t->n_float_data == (size_t)n, o->comm, PETSC_ERR_FILE_UNEXPECTED, "ONNX initializer %s: float_data has %zu entries, its shape needs %" PetscInt_FMT, t->name, t->n_float_data, n);
    for (PetscInt i = 0; i < n; i++) v[i] = (PetscScalar)t->float_data[i];
  } else {
    PetscCheck(t->n_double_data == (size_t)n, o->comm, PETSC_ERR_FILE_UNEXPECTED, "ONNX initializer %s: double_data has %zu entries, its shape needs %" PetscInt_FMT, t->name, t->n_double_data, n);
    for (PetscInt i = 0; i < n; i++) v[i] = (PetscScalar)t->double_data[i];
  }
  PetscFunctionReturn(0);
}

/* the tensor's entries as PetscScalar (float converted), in its own row-major order; free with PetscFree() */
PetscErrorCode NNONNXTensorToScalars(NNONNX *o, const Onnx__TensorProto *t, PetscScalar **v, PetscInt *n)
{
  PetscErrorCode ierr;
  PetscInt       bad = -1;

  PetscFunctionBegin;
  *v = NULL;
  PetscCheck(!(t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) && t->n_external_data == 0, o->comm, PETSC_ERR_SUP, "ONNX initializer %s is stored in external data (a separate file): not supported; save the model with its data inside (onnx.save_model(model, f, save_as_external_data=False))", t->name);
  PetscCheck(t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, o->comm, PETSC_ERR_SUP, "ONNX initializer %s has data type %d: only float (1) and double (11) are supported", t->name, (int)t->data_type);
  PetscCall(NNONNXTensorSize(o, t, n));
  PetscCall(PetscMalloc1(*n, v));
  ierr = NNONNXTensorRead(o, t, *n, *v);
  for (PetscInt i = 0; !ierr && i < *n; i++) {
    if (PetscIsInfOrNanReal((*v)[i])) bad = i;
    if (bad >= 0) break;
  }
  if (ierr || bad >= 0) PetscCall(PetscFree(*v)); /* no leak on the error paths */
  PetscCall(ierr);
  PetscCheck(bad < 0, o->comm, PETSC_ERR_FP, "ONNX initializer %s has a NaN or Inf at entry %" PetscInt_FMT ": the model is not usable", t->name, bad);
  PetscFunctionReturn(0);
}
#endif
