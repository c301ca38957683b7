/* ONNX import: each node of a chain as a PetNN layer (Gemm, MatMul + Add, activations, Flatten/Reshape, skips). */
#if defined(PETNN_HAVE_ONNX)
#include "onnximpl.h"
#include <string.h>

static PetscInt NNONNXAttrInt(const Onnx__NodeProto *node, const char name[], PetscInt dflt)
{
  const Onnx__AttributeProto *a = NNONNXGetAttribute(node, name);
  return a && a->has_i ? (PetscInt)a->i : dflt;
}

static PetscReal NNONNXAttrReal(const Onnx__NodeProto *node, const char name[], PetscReal dflt)
{
  const Onnx__AttributeProto *a = NNONNXGetAttribute(node, name);
  return a && a->has_f ? (PetscReal)a->f : dflt;
}

/* the node reads the tensor the chain has reached (its input k), and moves the chain to its output */
static PetscErrorCode NNONNXFollow(NNONNX *o, const Onnx__NodeProto *node, size_t k)
{
  PetscBool same = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCheck(node->n_output >= 1, o->comm, PETSC_ERR_FILE_UNEXPECTED, "ONNX node %s (%s) has no output", node->name, node->op_type);
  if (node->n_input > k) PetscCall(PetscStrcmp(node->input[k], o->cur, &same));
  PetscCheck(same, o->comm, PETSC_ERR_SUP, "The ONNX graph branches at node %s (%s, opset %lld): it reads %s, not %s (the output of the node before); only sequential graphs are supported yet", node->name, node->op_type, (long long)o->opset, node->n_input > k ? node->input[k] : "(nothing)", o->cur);
  o->cur = node->output[0];
  PetscFunctionReturn(0);
}

/* the dense layer itself, from the weight b (B's entries) and the bias c (nc entries; NULL: none) */
static PetscErrorCode NNONNXDenseLayer(NNONNX *o, const Onnx__NodeProto *node, const PetscScalar b[], PetscInt in, PetscInt out, PetscBool transB, PetscReal alpha, const Onnx__TensorProto *C, const PetscScalar c[], PetscInt nc, PetscReal beta)
{
  PetscScalar   *p;
  NNLayer        l;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCheck(!C || nc == out || nc == 1, o->comm, PETSC_ERR_ARG_INCOMP, "ONNX node %s (%s): bias %s has %" PetscInt_FMT " entries, expected %" PetscInt_FMT " (or 1)", node->name, node->op_type, C->name, nc, out);
  PetscCall(PetscMalloc1(out * in + (C ? out : 0), &p));
  for (PetscInt r = 0; r < out; r++)
    for (PetscInt s = 0; s < in; s++) p[r * in + s] = alpha * (transB ? b[r * in + s] : b[s * out + r]);
  for (PetscInt r = 0; C && r < out; r++) p[out * in + r] = beta * c[nc == 1 ? 0 : r];
  ierr = NNONNXAddLayer(o, node, NNLAYERDENSE, &l);
  if (!ierr) ierr = NNLayerDenseSetUnits(l, out);
  if (!ierr) ierr = NNLayerDenseSetBias(l, C ? PETSC_TRUE : PETSC_FALSE);
  if (!ierr) ierr = NNImportedAddParameters(o->net, ((PetscObject)l)->name, out * in + (C ? out : 0), p);
  PetscCall(PetscFree(p));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* a dense layer of weight W[out,in] (B, transposed unless transB) scaled by alpha, and bias beta*C (C may be NULL) */
static PetscErrorCode NNONNXDense(NNONNX *o, const Onnx__NodeProto *node, const Onnx__TensorProto *B, PetscBool transB, PetscReal alpha, const Onnx__TensorProto *C, PetscReal beta)
{
  PetscScalar   *b = NULL, *c = NULL;
  PetscInt       nb, nc = 0, in, out;
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  if (!B || B->n_dims != 2) PetscCall(NNONNXUnsupported(o, node, "its weight is not a 2-d initializer"));
  in  = (PetscInt)(transB ? B->dims[1] : B->dims[0]);
  out = (PetscInt)(transB ? B->dims[0] : B->dims[1]);
  PetscCheck(o->nfeat == in, o->comm, PETSC_ERR_ARG_INCOMP, "ONNX node %s (%s) takes %" PetscInt_FMT " features but the layers before give %" PetscInt_FMT "%s", node->name, node->op_type, in, o->nfeat < 0 ? -o->nfeat - 1 : o->nfeat, o->nfeat < 0 ? " not flattened (a Flatten node is missing)" : "");
  PetscCall(NNONNXTensorToScalars(o, B, &b, &nb));
  if (C) ierr = NNONNXTensorToScalars(o, C, &c, &nc);
  if (!ierr) ierr = NNONNXDenseLayer(o, node, b, in, out, transB, alpha, C, c, nc, beta);
  PetscCall(PetscFree(b)); /* on the error paths too */
  PetscCall(PetscFree(c));
  PetscCall(ierr);
  o->nfeat = out;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNONNXGemm(NNONNX *o, const Onnx__NodeProto *node)
{
  const Onnx__TensorProto *B = NULL, *C = NULL;

  PetscFunctionBegin;
  if (NNONNXAttrInt(node, "transA", 0)) PetscCall(NNONNXUnsupported(o, node, "transA = 1"));
  if (node->n_input >= 2) PetscCall(NNONNXGetInitializer(o, node->input[1], &B));
  if (node->n_input >= 3 && node->input[2][0]) {
    PetscCall(NNONNXGetInitializer(o, node->input[2], &C));
    if (!C) PetscCall(NNONNXUnsupported(o, node, "its bias C is not an initializer"));
  }
  PetscCall(NNONNXFollow(o, node, 0));
  PetscCall(NNONNXDense(o, node, B, NNONNXAttrInt(node, "transB", 0) ? PETSC_TRUE : PETSC_FALSE, NNONNXAttrReal(node, "alpha", 1), C, NNONNXAttrReal(node, "beta", 1)));
  PetscFunctionReturn(0);
}

/* MatMul by an initializer, and the Add of an initializer after it (torch's Linear without Gemm) as the bias */
static PetscErrorCode NNONNXMatMul(NNONNX *o, const Onnx__NodeProto *node, const Onnx__NodeProto *next, PetscBool *fused)
{
  const Onnx__TensorProto *B = NULL, *C = NULL;

  PetscFunctionBegin;
  *fused = PETSC_FALSE;
  if (node->n_input >= 2) PetscCall(NNONNXGetInitializer(o, node->input[1], &B));
  PetscCall(NNONNXFollow(o, node, 0));
  if (next && next->op_type && !strcmp(next->op_type, "Add") && next->n_input == 2 && next->n_output >= 1) {
    for (PetscInt k = 0; k < 2 && !C; k++) {
      if (strcmp(next->input[k], o->cur)) continue;
      PetscCall(NNONNXGetInitializer(o, next->input[1 - k], &C));
    }
  }
  PetscCall(NNONNXDense(o, node, B, PETSC_FALSE, 1, C, 1));
  if (C) {
    o->cur = next->output[0];
    *fused = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

/* the int64 entries of a shape initializer (Reshape's second input) */
static PetscErrorCode NNONNXInt64s(NNONNX *o, const Onnx__NodeProto *node, const Onnx__TensorProto *t, PetscInt n, int64_t v[])
{
  PetscFunctionBegin;
  if (!t || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || t->n_dims != 1 || t->dims[0] != n) PetscCall(NNONNXUnsupported(o, node, "only a reshape to (batch, features) given as an int64 initializer"));
  if (t->has_raw_data) {
    PetscCheck(t->raw_data.len == (size_t)n * 8, o->comm, PETSC_ERR_FILE_UNEXPECTED, "ONNX initializer %s: raw_data has %zu bytes, expected %d", t->name, t->raw_data.len, (int)(8 * n));
    memcpy(v, t->raw_data.data, (size_t)n * 8);
  } else {
    PetscCheck(t->n_int64_data == (size_t)n, o->comm, PETSC_ERR_FILE_UNEXPECTED, "ONNX initializer %s: int64_data has %zu entries, expected %" PetscInt_FMT, t->name, t->n_int64_data, n);
    memcpy(v, t->int64_data, (size_t)n * 8);
  }
  PetscFunctionReturn(0);
}

/* Flatten (axis 1) and Reshape to (batch, features): a flatten layer where the activation is not flat yet */
static PetscErrorCode NNONNXFlatten(NNONNX *o, const Onnx__NodeProto *node, PetscBool reshape)
{
  PetscInt size = o->nfeat < 0 ? -o->nfeat - 1 : o->nfeat;
  NNLayer  l;

  PetscFunctionBegin;
  if (reshape) {
    const Onnx__TensorProto *t = NULL;
    int64_t                  v[2];
    if (node->n_input >= 2) PetscCall(NNONNXGetInitializer(o, node->input[1], &t));
    PetscCall(NNONNXInt64s(o, node, t, 2, v));
    if (!((v[1] == size && v[0] >= -1) || (v[1] == -1 && v[0] >= 0))) PetscCall(NNONNXUnsupported(o, node, "only a reshape to (batch, features)"));
  } else if (NNONNXAttrInt(node, "axis", 1) != 1) PetscCall(NNONNXUnsupported(o, node, "only axis = 1"));
  PetscCall(NNONNXFollow(o, node, 0));
  if (o->nfeat < 0) {
    PetscCall(NNONNXAddLayer(o, node, NNLAYERFLATTEN, &l));
    o->nfeat = size;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNONNXActivation(NNONNX *o, const Onnx__NodeProto *node, NNLayerType type)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNONNXFollow(o, node, 0));
  PetscCall(NNONNXAddLayer(o, node, type, &l));
  if (!strcmp(type, NNLAYERLEAKYRELU)) PetscCall(NNLayerLeakyReLUSetSlope(l, NNONNXAttrReal(node, "alpha", 0.01)));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNONNXNode(NNONNX *o, const Onnx__NodeProto *node, const Onnx__NodeProto *next, PetscBool *fused)
{
  const char *op = node->op_type ? node->op_type : "";

  PetscFunctionBegin;
  *fused = PETSC_FALSE;
  if (node->domain && node->domain[0] && strcmp(node->domain, "ai.onnx")) PetscCall(NNONNXUnsupported(o, node, "operators of other domains"));
  if (!strcmp(op, "Gemm")) PetscCall(NNONNXGemm(o, node));
  else if (!strcmp(op, "MatMul")) PetscCall(NNONNXMatMul(o, node, next, fused));
  else if (!strcmp(op, "Relu")) PetscCall(NNONNXActivation(o, node, NNLAYERRELU));
  else if (!strcmp(op, "LeakyRelu")) PetscCall(NNONNXActivation(o, node, NNLAYERLEAKYRELU));
  else if (!strcmp(op, "Tanh")) PetscCall(NNONNXActivation(o, node, NNLAYERTANH));
  else if (!strcmp(op, "Sigmoid")) PetscCall(NNONNXActivation(o, node, NNLAYERSIGMOID));
  else if (!strcmp(op, "Flatten")) PetscCall(NNONNXFlatten(o, node, PETSC_FALSE));
  else if (!strcmp(op, "Reshape")) PetscCall(NNONNXFlatten(o, node, PETSC_TRUE));
  else if (!strcmp(op, "Identity") || !strcmp(op, "Dropout")) PetscCall(NNONNXFollow(o, node, 0));
  else PetscCall(NNONNXUnsupported(o, node, NULL));
  PetscFunctionReturn(0);
}

/* a chain: no tensor other than an initializer feeds two nodes */
static PetscErrorCode NNONNXCheckChain(NNONNX *o)
{
  PetscFunctionBegin;
  for (size_t i = 0; i < o->g->n_node; i++) {
    const Onnx__NodeProto *a = o->g->node[i];
    for (size_t k = 0; k < a->n_input; k++) {
      const Onnx__TensorProto *t;
      if (!a->input[k][0]) continue;
      PetscCall(NNONNXGetInitializer(o, a->input[k], &t));
      if (t) continue;
      for (size_t j = i + 1; j < o->g->n_node; j++) {
        const Onnx__NodeProto *b = o->g->node[j];
        for (size_t m = 0; m < b->n_input; m++) PetscCheck(strcmp(b->input[m], a->input[k]), o->comm, PETSC_ERR_SUP, "The ONNX graph branches at node %s (%s, opset %lld): %s feeds it and node %s (%s); only sequential graphs are supported yet", a->name, a->op_type, (long long)o->opset, a->input[k], b->name, b->op_type);
      }
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNONNXConvertNodes(NNONNX *o)
{
  PetscBool same = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(NNONNXCheckChain(o));
  for (size_t i = 0; i < o->g->n_node; i++) {
    PetscBool fused;
    PetscCall(NNONNXNode(o, o->g->node[i], i + 1 < o->g->n_node ? o->g->node[i + 1] : NULL, &fused));
    if (fused) i++;
  }
  PetscCheck(o->g->n_output == 1, o->comm, PETSC_ERR_SUP, "The ONNX graph has %zu outputs: only one is supported", o->g->n_output);
  PetscCall(PetscStrcmp(o->g->output[0]->name, o->cur, &same));
  PetscCheck(same, o->comm, PETSC_ERR_SUP, "The ONNX graph's output %s is not the end of its chain of nodes (%s): only sequential graphs are supported yet", o->g->output[0]->name, o->cur);
  PetscFunctionReturn(0);
}
#endif
