!
!  The Fortran module of PetNN: `use petnn` gives the handle types NN and NNData (include
!  petnn/finclude/petnn.h for the macros), the type names, and explicit interfaces of the calls a
!  simulation needs for online training and inference. Every routine follows PETSc's Fortran
!  conventions: PETSc's own handles (Vec, DM, PetscViewer) are passed as they are, the error code is
!  the last argument (check it with PetscCall()/PetscCallA() or CHKERRA), strings have any length.
!  The C stubs behind the interfaces are src/fortran/petnnf.c (in libpetnn).
!
#include <petsc/finclude/petscdmda.h>
#include <petnn/finclude/petnn.h>

module petnn
  use petscdmda
  implicit none

  type tNN
    sequence
    PetscFortranAddr :: v = -2
  end type tNN

  type tNNData
    sequence
    PetscFortranAddr :: v = -2
  end type tNNData

  character(len=*), parameter :: NNDATABUFFER = 'buffer'
  character(len=*), parameter :: NNDATABINARY = 'binary'
  character(len=*), parameter :: NNDATAHDF5 = 'hdf5'

  interface
    ! ---------------------------------------------------------------- networks
    subroutine NNCreateFromOptionsFile(comm, file, prefix, net, ierr)
      import tNN
      MPI_Comm :: comm
      character(len=*) :: file, prefix
      NN :: net
      PetscErrorCode :: ierr
    end subroutine NNCreateFromOptionsFile
    subroutine NNSetInputDM(net, da, ierr)
      import tNN, tDM
      NN :: net
      DM :: da
      PetscErrorCode :: ierr
    end subroutine NNSetInputDM
    subroutine NNSetUp(net, ierr)
      import tNN
      NN :: net
      PetscErrorCode :: ierr
    end subroutine NNSetUp
    subroutine NNView(net, viewer, ierr)
      import tNN, tPetscViewer
      NN :: net
      PetscViewer :: viewer
      PetscErrorCode :: ierr
    end subroutine NNView
    subroutine NNDestroy(net, ierr)
      import tNN
      NN :: net
      PetscErrorCode :: ierr
    end subroutine NNDestroy
    subroutine NNCheckpointLoad(net, file, ierr)
      import tNN
      NN :: net
      character(len=*) :: file
      PetscErrorCode :: ierr
    end subroutine NNCheckpointLoad
    subroutine NNCheckpointSave(net, file, ierr)
      import tNN
      NN :: net
      character(len=*) :: file
      PetscErrorCode :: ierr
    end subroutine NNCheckpointSave
    subroutine NNGetCursor(net, epoch, batch, step, ierr)
      import tNN
      NN :: net
      PetscInt :: epoch, batch, step
      PetscErrorCode :: ierr
    end subroutine NNGetCursor
    ! ---------------------------------------------------------------- inference and online training
    subroutine NNPredict(net, x, y, ierr)
      import tNN, tVec
      NN :: net
      Vec :: x, y
      PetscErrorCode :: ierr
    end subroutine NNPredict
    subroutine NNTrainStep(net, x, y, loss, ierr)
      import tNN, tVec
      NN :: net
      Vec :: x, y
      PetscReal :: loss
      PetscErrorCode :: ierr
    end subroutine NNTrainStep
    subroutine NNTrainStepBuffer(net, loss, ierr)
      import tNN
      NN :: net
      PetscReal :: loss
      PetscErrorCode :: ierr
    end subroutine NNTrainStepBuffer
    subroutine NNSetTrainBuffer(net, data, ierr)
      import tNN, tNNData
      NN :: net
      NNData :: data
      PetscErrorCode :: ierr
    end subroutine NNSetTrainBuffer
    ! ---------------------------------------------------------------- data sets and the replay buffer
    subroutine NNDataCreate(comm, data, ierr)
      import tNNData
      MPI_Comm :: comm
      NNData :: data
      PetscErrorCode :: ierr
    end subroutine NNDataCreate
    subroutine NNDataSetType(data, type, ierr)
      import tNNData
      NNData :: data
      character(len=*) :: type
      PetscErrorCode :: ierr
    end subroutine NNDataSetType
    subroutine NNDataSetOptionsPrefix(data, prefix, ierr)
      import tNNData
      NNData :: data
      character(len=*) :: prefix
      PetscErrorCode :: ierr
    end subroutine NNDataSetOptionsPrefix
    subroutine NNDataSetFromOptions(data, ierr)
      import tNNData
      NNData :: data
      PetscErrorCode :: ierr
    end subroutine NNDataSetFromOptions
    subroutine NNDataBufferPush(data, x, y, ierr)
      import tNNData, tVec
      NNData :: data
      Vec :: x, y
      PetscErrorCode :: ierr
    end subroutine NNDataBufferPush
    subroutine NNDataBufferGetCapacity(data, capacity, ierr)
      import tNNData
      NNData :: data
      PetscInt :: capacity
      PetscErrorCode :: ierr
    end subroutine NNDataBufferGetCapacity
    subroutine NNDataBufferGetCount(data, count, pushed, ierr)
      import tNNData
      NNData :: data
      PetscInt :: count
      PetscInt64 :: pushed
      PetscErrorCode :: ierr
    end subroutine NNDataBufferGetCount
    subroutine NNDataView(data, viewer, ierr)
      import tNNData, tPetscViewer
      NNData :: data
      PetscViewer :: viewer
      PetscErrorCode :: ierr
    end subroutine NNDataView
    subroutine NNDataDestroy(data, ierr)
      import tNNData
      NNData :: data
      PetscErrorCode :: ierr
    end subroutine NNDataDestroy
  end interface
end module petnn
