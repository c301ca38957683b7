/* ONNX import: the graph's input, the layer names, and the walk over the nodes (a chain). */
#if defined(PETNN_HAVE_ONNX)
#include "onnximpl.h"
#include <string.h>

/* the model's data input (the graph input that is no initializer): its declared shape becomes the input shape */
PetscErrorCode NNONNXSetInput(NNONNX *o)
{
  const Onnx__ValueInfoProto *in = NULL;
  const Onnx__TensorShapeProto *sh;
  PetscInt                    dim[NN_MAX_DIM], nd;
  NNShape                     s, s0;

  PetscFunctionBegin;
  for (size_t i = 0; i < o->g->n_input; i++) {
    const Onnx__TensorProto *t;
    PetscCall(NNONNXGetInitializer(o, o->g->input[i]->name, &t));
    if (!t) {
      PetscCheck(!in, o->comm, PETSC_ERR_SUP, "The ONNX graph has two data inputs, %s and %s: only one is supported", in->name, o->g->input[i]->name);
      in = o->g->input[i];
    }
  }
  PetscCheck(in, o->comm, PETSC_ERR_FILE_UNEXPECTED, "The ONNX graph has no data input");
  PetscCheck(in->type && in->type->tensor_type && in->type->tensor_type->shape, o->comm, PETSC_ERR_FILE_UNEXPECTED, "The ONNX graph input %s has no tensor shape", in->name);
  sh = in->type->tensor_type->shape;
  nd = (PetscInt)sh->n_dim - 1;
  PetscCheck(nd >= 1 && nd <= NN_MAX_DIM, o->comm, PETSC_ERR_SUP, "The ONNX graph input %s has %d dimensions: supported are (batch, features), (batch, C, H, W) and (batch, C, D, H, W)", in->name, (int)sh->n_dim);
  for (PetscInt d = 0; d < nd; d++) {
    const Onnx__TensorShapeProto__Dimension *x = sh->dim[d + 1];
    PetscCheck(x->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && x->dim_value > 0 && x->dim_value < PETSC_MAX_INT, o->comm, PETSC_ERR_SUP, "The ONNX graph input %s has no fixed size in dimension %" PetscInt_FMT ": only the batch dimension may be symbolic", in->name, d + 1);
    dim[d] = (PetscInt)x->dim_value;
  }
  PetscCall(NNGetInputShape(o->net, &s0));
  PetscCall(NNShapeSet(&s, nd, dim));
  if (s0.ndim > 0) {
    char a[64], b[64];
    PetscBool same = (PetscBool)(s0.ndim == s.ndim);
    for (PetscInt d = 0; same && d < nd; d++) same = (PetscBool)(s0.dim[d] == s.dim[d]);
    PetscCall(NNShapeToString(&s0, sizeof(a), a));
    PetscCall(NNShapeToString(&s, sizeof(b), b));
    PetscCheck(same, o->comm, PETSC_ERR_ARG_INCOMP, "The network's input shape %s (NNSetInputShape(), -nn_input_shape) does not fit the ONNX model's declared input %s of shape %s", a, in->name, b);
  }
  PetscCall(NNSetInputShape(o->net, nd, dim));
  o->cur   = in->name;
  o->nfeat = nd == 1 ? dim[0] : -1;
  if (nd > 1) o->nfeat = -NNShapeSize(&s) - 1; /* not flat; -(size+1) */
  PetscFunctionReturn(0);
}

/* a unique layer name from the node's name (or its operator): [A-Za-z0-9_], not starting with a digit */
static PetscErrorCode NNONNXLayerName(NNONNX *o, const Onnx__NodeProto *node, char name[], size_t len)
{
  const char *src = (node->name && node->name[0]) ? node->name : node->op_type;
  size_t      k   = 0;
  char        base[200];

  PetscFunctionBegin;
  for (size_t i = 0; src[i] && k < sizeof(base) - 1; i++) {
    char c  = src[i];
    PetscBool ok = (PetscBool)((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
    if (!ok) c = '_';
    if (c == '_' && (k == 0 || base[k - 1] == '_')) continue; /* no leading or doubled underscores */
    base[k++] = c;
  }
  while (k > 0 && base[k - 1] == '_') k--;
  base[k] = 0;
  if (!k) PetscCall(PetscStrncpy(base, "layer", sizeof(base)));
  if (base[0] >= '0' && base[0] <= '9') PetscCall(PetscSNPrintf(name, len, "n%s", base));
  else PetscCall(PetscStrncpy(name, base, len));
  for (PetscInt n = 2;; n++) {
    PetscBool used = PETSC_FALSE;
    for (PetscInt i = 0; i < o->nnames && !used; i++) PetscCall(PetscStrcmp(o->names[i], name, &used));
    if (!used) break;
    PetscCall(PetscSNPrintf(name, len, "%s%s_%" PetscInt_FMT, (base[0] >= '0' && base[0] <= '9') ? "n" : "", base, n));
  }
  PetscCall(PetscRealloc((o->nnames + 1) * sizeof(char *), &o->names));
  PetscCall(PetscStrallocpy(name, &o->names[o->nnames++]));
  PetscFunctionReturn(0);
}

PetscErrorCode NNONNXAddLayer(NNONNX *o, const Onnx__NodeProto *node, NNLayerType type, NNLayer *l)
{
  char name[256];

  PetscFunctionBegin;
  PetscCall(NNONNXLayerName(o, node, name, sizeof(name)));
  PetscCall(NNAddLayer(o->net, type, name, l));
  PetscFunctionReturn(0);
}

const Onnx__AttributeProto *NNONNXGetAttribute(const Onnx__NodeProto *node, const char name[])
{
  for (size_t i = 0; i < node->n_attribute; i++)
    if (node->attribute[i]->name && !strcmp(node->attribute[i]->name, name)) return node->attribute[i];
  return NULL;
}

PetscErrorCode NNONNXUnsupported(NNONNX *o, const Onnx__NodeProto *node, const char why[])
{
  PetscFunctionBegin;
  SETERRQ(o->comm, PETSC_ERR_SUP, "ONNX node %s (op type %s%s%s, opset %lld) is not supported%s%s. Supported operators: " NN_ONNX_SUPPORTED, node->name ? node->name : "(unnamed)", node->domain && node->domain[0] ? node->domain : "", node->domain && node->domain[0] ? "." : "", node->op_type ? node->op_type : "(none)", (long long)o->opset, why ? ": " : "", why ? why : "");
}
#endif
