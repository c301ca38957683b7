!
!  Online training inside a running Fortran simulation (the Fortran twin of online_heat.c, bitwise the same
!  loss history). A 2-D advection-diffusion solver u_t + a . grad u = nu lap u on the periodic unit square
!  (a DMDA, explicit Euler, upwind advection) pushes each step's pair (u_n, u_{n+1}) into a replay buffer and
!  trains a CNN surrogate of one step from it every m steps (NNTrainStepBuffer); then the surrogate replaces
!  the solver for n steps (NNPredict) and its relative error against the solver is reported. The network,
!  the optimizer and the buffer come from an options file, as TorchFort's model from its YAML file:
!
!    build/examples/online_heat_f -options_file examples/online_heat.opts
!    mpiexec -n 4 build/examples/online_heat_f -options_file examples/online_heat.opts -loss_history f.txt
!
!  Options (as online_heat.c): -M, -nu, -ax, -ay, -dt, -steps, -train_every, -train_iters, -surrogate_steps,
!  -loss_history <file>, -load <checkpoint.h5>, -kill_step <s>
!
#include <petsc/finclude/petscdmda.h>
#include <petnn/finclude/petnn.h>

module online_heat_f_mod
  use petscdmda
  use petnn
  implicit none

  type AppCtx
    PetscInt :: M = 32, steps = 200, every = 4, iters = 2, nsur = 20, kill = -1
    PetscReal :: nu = 0.01d0, ax = 0.5d0, ay = 0.25d0, dt = 0.0d0
    character(len=PETSC_MAX_PATH_LEN) :: history = '', load = ''
    integer :: fh = 0   ! the history file's unit (newunit: negative), 0: none
    PetscLogEvent :: ev
  end type AppCtx

  interface
    function c_raise(sig) bind(C, name='raise')
      use iso_c_binding
      integer(c_int), value :: sig
      integer(c_int) :: c_raise
    end function c_raise
  end interface

contains

  subroutine GetOptions(app, ierr)
    type(AppCtx) :: app
    PetscErrorCode :: ierr
    PetscBool :: flg
    PetscReal :: dtd, dta
    PetscClassId :: classid

    PetscCall(PetscOptionsGetInt(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-M', app%M, flg, ierr))
    PetscCall(PetscOptionsGetReal(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-nu', app%nu, flg, ierr))
    PetscCall(PetscOptionsGetReal(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-ax', app%ax, flg, ierr))
    PetscCall(PetscOptionsGetReal(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-ay', app%ay, flg, ierr))
    dtd = 0.2d0/real(app%M*app%M, 8)/app%nu   ! the same arithmetic as online_heat.c
    dta = 0.25d0/(real(app%M, 8)*(app%ax + app%ay))
    app%dt = min(dtd, dta)
    PetscCall(PetscOptionsGetReal(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-dt', app%dt, flg, ierr))
    PetscCall(PetscOptionsGetInt(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-steps', app%steps, flg, ierr))
    PetscCall(PetscOptionsGetInt(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-train_every', app%every, flg, ierr))
    PetscCall(PetscOptionsGetInt(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-train_iters', app%iters, flg, ierr))
    PetscCall(PetscOptionsGetInt(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-surrogate_steps', app%nsur, flg, ierr))
    PetscCall(PetscOptionsGetInt(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-kill_step', app%kill, flg, ierr))
    PetscCall(PetscOptionsGetString(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-loss_history', app%history, flg, ierr))
    PetscCall(PetscOptionsGetString(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-load', app%load, flg, ierr))
    classid = 0
    PetscCall(PetscLogEventRegister('SolverStep', classid, app%ev, ierr))
  end subroutine GetOptions

  ! u(x, y) = sin(2 pi x) sin(2 pi y) + 0.5 cos(2 pi (2 x + y)) at the cell centres
  subroutine InitialState(da, app, U, ierr)
    DM :: da
    type(AppCtx) :: app
    Vec :: U
    PetscErrorCode :: ierr
    PetscScalar, pointer :: u2(:,:)
    PetscInt :: xs, ys, xm, ym, i, j
    PetscReal :: x, y

    PetscCall(DMDAVecGetArrayF90(da, U, u2, ierr))
    PetscCall(DMDAGetCorners(da, xs, ys, PETSC_NULL_INTEGER, xm, ym, PETSC_NULL_INTEGER, ierr))
    do j = ys, ys + ym - 1
      do i = xs, xs + xm - 1
        x = (real(i, 8) + 0.5d0)/real(app%M, 8)
        y = (real(j, 8) + 0.5d0)/real(app%M, 8)
        u2(i, j) = sin(2.0d0*PETSC_PI*x)*sin(2.0d0*PETSC_PI*y) + 0.5d0*cos(2.0d0*PETSC_PI*(2.0d0*x + y))
      end do
    end do
    PetscCall(DMDAVecRestoreArrayF90(da, U, u2, ierr))
  end subroutine InitialState

  ! one explicit Euler step, U <- U + dt (nu lap U - ax dU/dx - ay dU/dy), upwind differences (ax, ay >= 0)
  subroutine SolverStep(da, app, U, Ul, ierr)
    DM :: da
    type(AppCtx) :: app
    Vec :: U, Ul
    PetscErrorCode :: ierr
    PetscScalar, pointer :: u2(:,:), un(:,:)
    PetscScalar :: lap, adv
    PetscInt :: xs, ys, xm, ym, i, j
    PetscReal :: h, cd, cx, cy

    PetscCall(PetscLogEventBegin(app%ev, ierr))
    h = 1.0d0/real(app%M, 8)
    cd = app%nu/(h*h)
    cx = app%ax/h
    cy = app%ay/h
    PetscCall(DMGlobalToLocalBegin(da, U, INSERT_VALUES, Ul, ierr))
    PetscCall(DMGlobalToLocalEnd(da, U, INSERT_VALUES, Ul, ierr))
    PetscCall(DMDAVecGetArrayF90(da, Ul, u2, ierr))
    PetscCall(DMDAVecGetArrayF90(da, U, un, ierr))
    PetscCall(DMDAGetCorners(da, xs, ys, PETSC_NULL_INTEGER, xm, ym, PETSC_NULL_INTEGER, ierr))
    do j = ys, ys + ym - 1
      do i = xs, xs + xm - 1
        lap = ((u2(i + 1, j) + u2(i - 1, j)) + (u2(i, j + 1) + u2(i, j - 1))) - 4.0d0*u2(i, j)
        adv = cx*(u2(i, j) - u2(i - 1, j)) + cy*(u2(i, j) - u2(i, j - 1))
        un(i, j) = u2(i, j) + app%dt*(cd*lap - adv)
      end do
    end do
    PetscCall(DMDAVecRestoreArrayF90(da, U, un, ierr))
    PetscCall(DMDAVecRestoreArrayF90(da, Ul, u2, ierr))
    PetscCall(PetscLogFlops(14.0d0*xm*ym, ierr))
    PetscCall(PetscLogEventEnd(app%ev, ierr))
  end subroutine SolverStep

  ! training step s done with loss L: the history line (rank 0), and the kill of the restart test
  subroutine Record(app, s, L, ierr)
    type(AppCtx) :: app
    PetscInt :: s
    PetscReal :: L
    PetscErrorCode :: ierr
    integer :: rc

    if (app%fh /= 0) then
      write (app%fh, '(I0,1X,ES25.17E3)') s, L
      flush (app%fh)
    end if
    if (s == app%kill) then
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, 'SIGKILL after training step '//trim(itoa(s))//new_line('a'), ierr))
      flush (6)
      rc = c_raise(9)
    end if
  end subroutine Record

  function itoa(i) result(str)
    PetscInt, intent(in) :: i
    character(len=24) :: str
    write (str, '(I0)') i
  end function itoa

  ! -load: the network, optimizer and buffer from the checkpoint; the solver recomputes its state
  subroutine Resume(net, da, app, U, Ul, n0, ierr)
    NN :: net
    DM :: da
    type(AppCtx) :: app
    Vec :: U, Ul
    PetscInt :: n0, s, n, epoch, batch
    PetscErrorCode :: ierr

    n0 = 0
    if (len_trim(app%load) == 0) return
    PetscCall(NNCheckpointLoad(net, trim(app%load), ierr))
    PetscCall(NNGetCursor(net, epoch, batch, s, ierr))
    if (mod(s, app%iters) /= 0) then
      ierr = PETSC_ERR_ARG_INCOMP
      return
    end if
    n0 = (s/app%iters)*app%every
    do n = 1, n0
      PetscCall(SolverStep(da, app, U, Ul, ierr))
    end do
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, 'resumed from '//trim(app%load)//' after training step '//trim(itoa(s))//': the solver recomputed '//trim(itoa(n0))//' steps'//new_line('a'), ierr))
  end subroutine Resume

  ! solver steps n0+1..steps, each pushing (u_n, u_{n+1}); every m steps k training steps from the buffer
  subroutine TrainOnline(net, buf, da, app, U, Ul, n0, ierr)
    NN :: net
    NNData :: buf
    DM :: da
    type(AppCtx) :: app
    Vec :: U, Ul, U0
    PetscInt :: n0, n, k, s, epoch, batch
    PetscReal :: L
    PetscErrorCode :: ierr
    character(len=128) :: line

    PetscCall(VecDuplicate(U, U0, ierr))
    PetscCall(NNGetCursor(net, epoch, batch, s, ierr))
    do n = n0 + 1, app%steps
      PetscCall(VecCopy(U, U0, ierr))
      PetscCall(SolverStep(da, app, U, Ul, ierr))
      PetscCall(NNDataBufferPush(buf, U0, U, ierr))
      if (mod(n, app%every) /= 0) cycle
      do k = 1, app%iters
        PetscCall(NNTrainStepBuffer(net, L, ierr))
        s = s + 1
        PetscCall(Record(app, s, L, ierr))
      end do
      write (line, '(A,I3,A,I3,A,ES10.4)') 'solver step ', n, ': training step ', s, ', loss ', L
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, trim(line)//new_line('a'), ierr))
    end do
    PetscCall(VecDestroy(U0, ierr))
  end subroutine TrainOnline

  ! n steps with the surrogate from the current state, against the solver continuing; the relative L2 error
  subroutine RunSurrogate(net, da, app, U, Ul, ierr)
    NN :: net
    DM :: da
    type(AppCtx) :: app
    Vec :: U, Ul, S, T
    PetscErrorCode :: ierr
    PetscInt :: n
    PetscReal :: nd, nu
    character(len=128) :: line

    PetscCall(VecDuplicate(U, S, ierr))
    PetscCall(VecDuplicate(U, T, ierr))
    PetscCall(VecCopy(U, S, ierr))
    do n = 1, app%nsur
      PetscCall(NNPredict(net, S, T, ierr))
      PetscCall(VecCopy(T, S, ierr))
      PetscCall(SolverStep(da, app, U, Ul, ierr))
    end do
    PetscCall(VecAXPY(S, -1.0d0, U, ierr))
    PetscCall(VecNorm(S, NORM_2, nd, ierr))
    PetscCall(VecNorm(U, NORM_2, nu, ierr))
    write (line, '(A,I0,A,ES10.3)') 'surrogate for ', app%nsur, ' steps instead of the solver: relative L2 error ', nd/nu
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, trim(line)//new_line('a'), ierr))
    if (app%fh /= 0) write (app%fh, '(A,ES25.17E3)') 'error ', nd/nu
    PetscCall(VecDestroy(S, ierr))
    PetscCall(VecDestroy(T, ierr))
  end subroutine RunSurrogate
end module online_heat_f_mod

program online_heat_f
  use online_heat_f_mod
  implicit none
  type(AppCtx) :: app
  DM :: da
  NN :: net
  NNData :: buf
  Vec :: U, Ul
  PetscInt :: n0, cap, one = 1
  PetscErrorCode :: ierr
  PetscMPIInt :: rank
  PetscBool :: flg
  character(len=256) :: line

  PetscCallA(PetscInitialize(ierr))
  PetscCallA(GetOptions(app, ierr))
  PetscCallA(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, app%M, app%M, PETSC_DECIDE, PETSC_DECIDE, one, one, PETSC_NULL_INTEGER, PETSC_NULL_INTEGER, da, ierr))
  PetscCallA(DMSetFromOptions(da, ierr))
  PetscCallA(DMSetUp(da, ierr))
  PetscCallA(DMCreateGlobalVector(da, U, ierr))
  PetscCallA(DMCreateLocalVector(da, Ul, ierr))
  PetscCallA(InitialState(da, app, U, ierr))

  ! the surrogate and its replay buffer, configured by the options (file)
  PetscCallA(NNCreateFromOptionsFile(PETSC_COMM_WORLD, '', '', net, ierr))
  PetscCallA(NNSetInputDM(net, da, ierr))
  PetscCallA(NNSetUp(net, ierr))
  PetscCallA(NNDataCreate(PETSC_COMM_WORLD, buf, ierr))
  PetscCallA(NNDataSetType(buf, NNDATABUFFER, ierr))
  PetscCallA(NNDataSetFromOptions(buf, ierr))
  PetscCallA(NNSetTrainBuffer(net, buf, ierr))
  PetscCallA(NNDataBufferGetCapacity(buf, cap, ierr))
  write (line, '(A,I0,A,I0,A,ES9.3,A,I0,A,I0,A,I0,A,I0,A,I0,A)') 'advection-diffusion on ', app%M, ' x ', app%M, ', dt ', app%dt, ': ', &
    app%steps, ' solver steps training every ', app%every, ' (', app%iters, ' steps from a buffer of ', cap, '), then ', app%nsur, ' surrogate steps'
  PetscCallA(PetscPrintf(PETSC_COMM_WORLD, trim(line)//new_line('a'), ierr))
  PetscCallMPIA(MPI_Comm_rank(PETSC_COMM_WORLD, rank, ierr))
  if (rank == 0 .and. len_trim(app%history) > 0) open (newunit=app%fh, file=trim(app%history), status='replace', action='write')

  PetscCallA(Resume(net, da, app, U, Ul, n0, ierr))
  PetscCallA(TrainOnline(net, buf, da, app, U, Ul, n0, ierr))
  PetscCallA(RunSurrogate(net, da, app, U, Ul, ierr))
  PetscCallA(PetscOptionsHasName(PETSC_NULL_OPTIONS, PETSC_NULL_CHARACTER, '-buffer_view', flg, ierr))
  if (flg) then
    PetscCallA(NNDataView(buf, PETSC_VIEWER_STDOUT_WORLD, ierr))
  end if

  if (app%fh /= 0) close (app%fh)
  PetscCallA(NNDataDestroy(buf, ierr))
  PetscCallA(NNDestroy(net, ierr))
  PetscCallA(VecDestroy(U, ierr))
  PetscCallA(VecDestroy(Ul, ierr))
  PetscCallA(DMDestroy(da, ierr))
  PetscCallA(PetscFinalize(ierr))
end program online_heat_f
