/*
   The C side of PetNN's Fortran module (src/fortran/petnnmod.F90), written as PETSc writes its own Fortran stubs
   (the ftn-custom folders of PETSc): the symbol is the routine's name in the Fortran compiler's mangling, handles come
   as pointers to the C pointer a Fortran handle holds, MPI communicators as MPI_Fint, strings with their hidden
   lengths after the arguments (blank-padded, not terminated: FIXCHAR()), the error code last.
*/
#include <petnn.h>
#if defined(PETSC_HAVE_FORTRAN)
  #include <petsc/private/fortranimpl.h>

  #if defined(PETSC_HAVE_FORTRAN_CAPS)
    #define nncreatefromoptionsfile_ NNCREATEFROMOPTIONSFILE
    #define nnsetinputdm_            NNSETINPUTDM
    #define nnsetup_                 NNSETUP
    #define nnview_                  NNVIEW
    #define nndestroy_               NNDESTROY
    #define nncheckpointload_        NNCHECKPOINTLOAD
    #define nncheckpointsave_        NNCHECKPOINTSAVE
    #define nngetcursor_             NNGETCURSOR
    #define nnpredict_               NNPREDICT
    #define nntrainstep_             NNTRAINSTEP
    #define nntrainstepbuffer_       NNTRAINSTEPBUFFER
    #define nnsettrainbuffer_        NNSETTRAINBUFFER
    #define nndatacreate_            NNDATACREATE
    #define nndatasettype_           NNDATASETTYPE
    #define nndatasetoptionsprefix_  NNDATASETOPTIONSPREFIX
    #define nndatasetfromoptions_    NNDATASETFROMOPTIONS
    #define nndatabufferpush_        NNDATABUFFERPUSH
    #define nndatabuffergetcapacity_ NNDATABUFFERGETCAPACITY
    #define nndatabuffergetcount_    NNDATABUFFERGETCOUNT
    #define nndataview_              NNDATAVIEW
    #define nndatadestroy_           NNDATADESTROY
  #elif !defined(PETSC_HAVE_FORTRAN_UNDERSCORE)
    #define nncreatefromoptionsfile_ nncreatefromoptionsfile
    #define nnsetinputdm_            nnsetinputdm
    #define nnsetup_                 nnsetup
    #define nnview_                  nnview
    #define nndestroy_               nndestroy
    #define nncheckpointload_        nncheckpointload
    #define nncheckpointsave_        nncheckpointsave
    #define nngetcursor_             nngetcursor
    #define nnpredict_               nnpredict
    #define nntrainstep_             nntrainstep
    #define nntrainstepbuffer_       nntrainstepbuffer
    #define nnsettrainbuffer_        nnsettrainbuffer
    #define nndatacreate_            nndatacreate
    #define nndatasettype_           nndatasettype
    #define nndatasetoptionsprefix_  nndatasetoptionsprefix
    #define nndatasetfromoptions_    nndatasetfromoptions
    #define nndatabufferpush_        nndatabufferpush
    #define nndatabuffergetcapacity_ nndatabuffergetcapacity
    #define nndatabuffergetcount_    nndatabuffergetcount
    #define nndataview_              nndataview
    #define nndatadestroy_           nndatadestroy
  #endif

PETSC_EXTERN void nncreatefromoptionsfile_(MPI_Fint *comm, char *file, char *prefix, NN *net, PetscErrorCode *ierr, PETSC_FORTRAN_CHARLEN_T lfile, PETSC_FORTRAN_CHARLEN_T lprefix)
{
  char *f, *p;

  FIXCHAR(file, lfile, f);
  FIXCHAR(prefix, lprefix, p);
  *ierr = NNCreateFromOptionsFile(MPI_Comm_f2c(*comm), f, p, net);
  if (*ierr) return;
  FREECHAR(file, f);
  if (*ierr) return;
  FREECHAR(prefix, p);
}

PETSC_EXTERN void nnsetinputdm_(NN *net, DM *da, PetscErrorCode *ierr)
{
  *ierr = NNSetInputDM(*net, *da);
}

PETSC_EXTERN void nnsetup_(NN *net, PetscErrorCode *ierr)
{
  *ierr = NNSetUp(*net);
}

PETSC_EXTERN void nnview_(NN *net, PetscViewer *vin, PetscErrorCode *ierr)
{
  PetscViewer v;

  PetscPatchDefaultViewers_Fortran(vin, v);
  *ierr = NNView(*net, v);
}

PETSC_EXTERN void nndestroy_(NN *net, PetscErrorCode *ierr)
{
  PETSC_FORTRAN_OBJECT_F_DESTROYED_TO_C_NULL(net);
  *ierr = NNDestroy(net);
  if (*ierr) return;
  PETSC_FORTRAN_OBJECT_C_NULL_TO_F_DESTROYED(net);
}

PETSC_EXTERN void nncheckpointload_(NN *net, char *file, PetscErrorCode *ierr, PETSC_FORTRAN_CHARLEN_T len)
{
  char *f;

  FIXCHAR(file, len, f);
  *ierr = NNCheckpointLoad(*net, f);
  if (*ierr) return;
  FREECHAR(file, f);
}

PETSC_EXTERN void nncheckpointsave_(NN *net, char *file, PetscErrorCode *ierr, PETSC_FORTRAN_CHARLEN_T len)
{
  char *f;

  FIXCHAR(file, len, f);
  *ierr = NNCheckpointSave(*net, f);
  if (*ierr) return;
  FREECHAR(file, f);
}

PETSC_EXTERN void nngetcursor_(NN *net, PetscInt *epoch, PetscInt *batch, PetscInt *step, PetscErrorCode *ierr)
{
  *ierr = NNGetCursor(*net, epoch, batch, step);
}

PETSC_EXTERN void nnpredict_(NN *net, Vec *x, Vec *y, PetscErrorCode *ierr)
{
  *ierr = NNPredict(*net, *x, *y);
}

PETSC_EXTERN void nntrainstep_(NN *net, Vec *x, Vec *y, PetscReal *loss, PetscErrorCode *ierr)
{
  *ierr = NNTrainStep(*net, *x, *y, loss);
}

PETSC_EXTERN void nntrainstepbuffer_(NN *net, PetscReal *loss, PetscErrorCode *ierr)
{
  *ierr = NNTrainStepBuffer(*net, loss);
}

PETSC_EXTERN void nnsettrainbuffer_(NN *net, NNData *data, PetscErrorCode *ierr)
{
  *ierr = NNSetTrainBuffer(*net, *data);
}

PETSC_EXTERN void nndatacreate_(MPI_Fint *comm, NNData *data, PetscErrorCode *ierr)
{
  *ierr = NNDataCreate(MPI_Comm_f2c(*comm), data);
}

PETSC_EXTERN void nndatasettype_(NNData *data, char *type, PetscErrorCode *ierr, PETSC_FORTRAN_CHARLEN_T len)
{
  char *t;

  FIXCHAR(type, len, t);
  *ierr = NNDataSetType(*data, t);
  if (*ierr) return;
  FREECHAR(type, t);
}

PETSC_EXTERN void nndatasetoptionsprefix_(NNData *data, char *prefix, PetscErrorCode *ierr, PETSC_FORTRAN_CHARLEN_T len)
{
  char *p;

  FIXCHAR(prefix, len, p);
  *ierr = NNDataSetOptionsPrefix(*data, p);
  if (*ierr) return;
  FREECHAR(prefix, p);
}

PETSC_EXTERN void nndatasetfromoptions_(NNData *data, PetscErrorCode *ierr)
{
  *ierr = NNDataSetFromOptions(*data);
}

PETSC_EXTERN void nndatabufferpush_(NNData *data, Vec *x, Vec *y, PetscErrorCode *ierr)
{
  *ierr = NNDataBufferPush(*data, *x, *y);
}

PETSC_EXTERN void nndatabuffergetcapacity_(NNData *data, PetscInt *capacity, PetscErrorCode *ierr)
{
  *ierr = NNDataBufferGetCapacity(*data, capacity);
}

PETSC_EXTERN void nndatabuffergetcount_(NNData *data, PetscInt *count, PetscInt64 *pushed, PetscErrorCode *ierr)
{
  *ierr = NNDataBufferGetCount(*data, count, pushed);
}

PETSC_EXTERN void nndataview_(NNData *data, PetscViewer *vin, PetscErrorCode *ierr)
{
  PetscViewer v;

  PetscPatchDefaultViewers_Fortran(vin, v);
  *ierr = NNDataView(*data, v);
}

PETSC_EXTERN void nndatadestroy_(NNData *data, PetscErrorCode *ierr)
{
  PETSC_FORTRAN_OBJECT_F_DESTROYED_TO_C_NULL(data);
  *ierr = NNDataDestroy(data);
  if (*ierr) return;
  PETSC_FORTRAN_OBJECT_C_NULL_TO_F_DESTROYED(data);
}
#endif
