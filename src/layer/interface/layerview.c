/* NNLayerView(): type, shapes, parameter count, the type's details and the children. */
#include <petnn/private/nnimpl.h>

/*@C
   NNLayerView - prints the layer type, shapes and parameter count

   Collective

   Level: beginner
@*/
PetscErrorCode NNLayerView(NNLayer l, PetscViewer viewer)
{
  PetscBool iascii;
  char      in[64], out[64];
  PetscInt  np;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)l), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(NNShapeToString(&l->inshape, sizeof(in), in));
  PetscCall(NNShapeToString(&l->outshape, sizeof(out), out));
  PetscCall(NNLayerGetNumParametersGlobal(l, &np)); /* partitioned layers: all the pieces */
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s: %s %s -> %s, %" PetscInt_FMT " parameters\n", ((PetscObject)l)->name, ((PetscObject)l)->type_name, in, out, np));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscTryTypeMethod(l, view, viewer);
  if (l->part.shard && l->setupcalled) {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(NNLayerGetPartitionComm(l), &size));
    PetscCall(PetscViewerASCIIPrintf(viewer, "partition shard: every parameter tensor split along its first axis over %d ranks, %" PetscInt_FMT " of %" PetscInt_FMT " on rank 0, all-gathered for each pass\n", size, l->nparam, l->part.gnparam));
  }
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerView(l->children[c], viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}
