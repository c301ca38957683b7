/*
   Dropout: inverted dropout as torch.nn.Dropout.

   Training mode: each entry is kept with probability 1-p and scaled by 1/(1-p), so the expected
   output equals the input:  y_i = x_i m_i / (1-p),  m_i = (u_i >= p),  u_i ~ U[0,1) drawn from the
   network's generator (one draw per entry, in memory order), so masks are reproducible from the
   seed and a checkpointed generator state.  Evaluation mode: identity.

   The scaled mask of the last forward pass is kept for the backward pass: dx = dy m / (1-p).
*/
#include "dropout.h"
#include <petnn/private/deviceimpl.h>

static PetscErrorCode NNLayerSetUp_Dropout(NNLayer l)
{
  NNLayer_Dropout *d = (NNLayer_Dropout *)l->data;

  PetscFunctionBegin;
  l->outshape = l->inshape;
  PetscCall(PetscMalloc1(l->nbatch * NNShapeSize(&l->inshape), &d->mask));
  d->masked = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Dropout(NNLayer l)
{
  NNLayer_Dropout *d = (NNLayer_Dropout *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree(d->mask));
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDropoutResetDevice(l));
#endif
  d->masked = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* one uniform number per entry of a sample in training mode (data-parallel training skips the other groups' draws) */
static PetscErrorCode NNLayerRandomDraws_Dropout(NNLayer l, PetscInt *count)
{
  NNLayer_Dropout *d = (NNLayer_Dropout *)l->data;

  PetscFunctionBegin;
  *count = (l->training && d->rate > 0) ? NNShapeSize(&l->inshape) : 0;
  PetscFunctionReturn(0);
}

#include <petnn/private/nnrealdouble.h>
#include "dropout_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "dropout_passes.h"
#include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerDropoutSetRate_Dropout(NNLayer l, PetscReal p)
{
  PetscFunctionBegin;
  PetscCheck(p >= 0 && p < 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Dropout layer %s: rate %g is invalid (-%srate); valid rates are 0 <= p < 1", ((PetscObject)l)->name, (double)p, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  ((NNLayer_Dropout *)l->data)->rate = p;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Dropout(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_Dropout *d = (NNLayer_Dropout *)l->data;
  PetscReal        p = d->rate;
  PetscBool        flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Dropout layer options");
  PetscCall(PetscOptionsReal("-rate", "Probability of zeroing an entry in training mode, 0 <= p < 1", "NNLayerDropoutSetRate", p, &p, &flg));
  if (flg) PetscCall(NNLayerDropoutSetRate_Dropout(l, p));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_Dropout(NNLayer l, PetscViewer v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "rate %g\n", (double)((NNLayer_Dropout *)l->data)->rate));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_Dropout(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerDropoutSetRate_C", NULL));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERDROPOUT - "dropout": inverted dropout (torch.nn.Dropout)

   In training mode each entry is zeroed with probability p and the others are scaled by 1/(1-p);
   in evaluation mode the layer is the identity. Masks are drawn from the network's generator
   (-nn_seed), so runs are reproducible.

   Options Database Key:
.  -<prefix>rate <p> - drop probability, 0 <= p < 1 (default 0.5)

   Level: beginner

.seealso: `NNLayerDropoutSetRate()`, `NNSetTraining()`, `NNLayerType`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Dropout(NNLayer l)
{
  NNLayer_Dropout *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->rate                = 0.5;
  l->data                = d;
  l->ops->setup          = NNLayerSetUp_Dropout;
  l->ops->reset          = NNLayerReset_Dropout;
  l->ops->forward        = NNDropoutForward;
  l->ops->backward       = NNDropoutBackward;
  l->ops->forwardsingle  = NNDropoutForwardSingle;
  l->ops->backwardsingle = NNDropoutBackwardSingle;
  l->ops->randomdraws    = NNLayerRandomDraws_Dropout;
  l->forwardstate         = PETSC_TRUE; /* backward applies the mask of the last forward pass */
#if defined(PETNN_HAVE_CUDA)
  l->ops->forwarddevice  = NNLayerForwardDevice_Dropout;
  l->ops->backwarddevice = NNLayerBackwardDevice_Dropout;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks: each rank draws its entries' mask as on the CPU */
#endif
  l->ops->setfromoptions = NNLayerSetFromOptions_Dropout;
  l->ops->view           = NNLayerView_Dropout;
  l->ops->destroy        = NNLayerDestroy_Dropout;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerDropoutSetRate_C", NNLayerDropoutSetRate_Dropout));
  PetscFunctionReturn(0);
}
