!
!  Fortran types of PetNN (include before `use petnn`, as petsc/finclude/petscvec.h before `use petscvec`):
!
!    #include <petsc/finclude/petscdmda.h>
!    #include <petnn/finclude/petnn.h>
!          use petscdmda
!          use petnn
!          NN     net
!          NNData buffer
!
#if !defined(PETNNFINCLUDE_H)
#define PETNNFINCLUDE_H

#include <petsc/finclude/petscsys.h>

#define NN type(tNN)
#define NNData type(tNNData)
#define NNDataType character*(80)

#endif
