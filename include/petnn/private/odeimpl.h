/* Private struct of the neural-ODE block (ts/odeblock*.c): layer type "ode". */
#pragma once

#include <petnn/private/containerimpl.h>
#include <petscts.h>
#include <petnn/private/mgritimpl.h>

#define NN_ODE_MAX_STAGES 16
#define NN_ODE_KIND       "ODE block" /* starts the container's error messages */

typedef struct {
  /* configuration */
  PetscReal       T;         /* final time */
  PetscInt        N;         /* fixed steps, h = T/N */
  NNODEParameters params;    /* shared or one set per step */
  NNODEScheme     scheme;    /* TS or hand-written discrete residual stack */
  PetscInt        K;         /* stored states for the backward pass (0: every step) */
  PetscBool       timeinput; /* t is an extra input feature of f */
  PetscInt        nobs;      /* observation times (0: the output is u(T)) */
  PetscReal      *tobs;
  PetscInt       *kobs;      /* their step indices */
  PetscBool       stepsset, timeset; /* given by the user (not defaults) */

  /* derived at set up */
  PetscReal h;
  PetscInt  S;     /* entries of one sample's state */
  PetscInt  Sin;   /* entries of one sample's input of f (S + 1 with time input) */
  PetscInt  P, B;  /* parameters and buffer entries of one copy of f */
  PetscInt *cpoff, *cboff; /* child c's offsets within one copy */
  PetscInt  kend;  /* steps integrated: N, or the last observation's step */

  /* f's activations (as a residual block wires its children) */
  NNLayerContainer f;    /* f.out[c]: output of child c; f.dout[c]: its gradient (the last is NULL) */
  DM        dm;         /* the input's DM (NULL: sequential) */
  Vec       fin, dfin;  /* time input: f's augmented input and its gradient */

  /* TS machinery, made for the activation layout of the first pass */
  TS           ts;
  Mat          J, Jp, mffd;
  Vec          U, F, F0, lambda, mu, gx;
  PetscInt     nU;           /* samples the sequential TS Vecs hold (-1: DMDA layout) */
  PetscInt     nstages;      /* stage abscissae, to recover exact stage times */
  PetscReal    c[NN_ODE_MAX_STAGES];
  PetscInt     nstagevecs;   /* stage Vecs the trajectory stores per step */
  PetscScalar *mubuf;        /* one step's parameter gradient, on every rank */
  PetscBool    inrecompute;  /* a segment re-solve: the post-step hook records nothing */
  PetscBool    implicit;     /* theta methods: Newton solves with matrix-free J v */
  PetscBool    fsal;         /* an RK tableau whose last stage is the next step's first */
  PetscMPIInt  tsrank, tssize;
  PetscInt     n;            /* samples of the current pass */

  /* where the children last ran forward, and the Jacobians' linearization points */
  PetscObjectId    fwdid;
  PetscObjectState fwdstate;
  PetscInt         fwdk;
  PetscReal        fwdt;
  PetscBool        fwdvalid;
  Vec              jU, jpU;
  PetscInt         jk, jpk;
  PetscReal        jt, jpt;
  /* one backward pass gives J^T v and Jp^T v: cached for the second product */
  PetscObjectId    bwdid, bwdvid;
  PetscObjectState bwdstate, bwdvstate;
  PetscInt         bwdk;
  PetscReal        bwdt;
  PetscBool        bwdvalid;
  PetscScalar     *gp; /* parameter gradient of one copy of f */

  /* forward record for the backward pass */
  Vec      *bnd;     /* checkpoints: the state at the start of each segment */
  PetscInt  L, nseg; /* segment length and count */
  Vec      *xs;      /* discrete scheme: every state x_k */
  PetscInt  nxs, xsn; /* how many, and for which sample count (-1: DMDA) */
  Vec       yout;    /* the pass's output (observations are copied into it by the post-step hook) */
  PetscBool recorded; /* a training forward pass recorded what the backward pass needs */

  /* f's intermediate activations at every stage of the recorded steps, so the adjoint skips the
     forward re-evaluation (RK, and children whose backward pass needs only their input and output) */
  PetscBool  storeacts;  /* the option */
  PetscBool  actsok;     /* f and the integrator allow it */
  PetscBool  storing;    /* a recording solve is running */
  PetscBool *actneed;    /* per child: its output is kept */
  Vec       *acts;       /* [slot * nchildren + child], slot = (k - actk0) * nstages + stage */
  PetscInt  *actpass;    /* per slot: the pass that wrote it */
  PetscInt   nslots, actk0, actsteps, passid;
  Vec       *cur;        /* per child: the Vec holding its output from the last forward evaluation */
  PetscLogDouble actbytes; /* bytes kept per stage */
  PetscInt   actstored;  /* stages whose activations the last training forward pass keeps at the peak */

  /* layer-parallel training (ts/ode/odeblock_mgrit.c): MGRIT over the steps, the ranks of mgcomm each owning a chunk */
  NNODEParallel parallel;
  PetscInt      mgranks;   /* ranks per MGRIT group (-<blk>_mgrit_ranks; 0: the whole layer communicator) */
  MPI_Comm      mgparent;  /* duplicate of the layer communicator the MGRIT group was split from */
  MPI_Comm      mgcomm;    /* the MGRIT group: the "layer" communicator of the time chunks */
  NNMGRIT       mg;
  PetscInt      mgn;       /* samples of the MGRIT state template (-1: none yet) */
  PetscInt      rks;       /* the propagator's explicit RK tableau (1fe for the discrete scheme) */
  PetscReal     rkA[NN_ODE_MAX_STAGES * NN_ODE_MAX_STAGES], rkb[NN_ODE_MAX_STAGES], rkc[NN_ODE_MAX_STAGES];
  Vec           mgu, mgl, mgl0;   /* u_0 (and u_N), lambda_N, lambda_0 of a pass */
  Vec          *mgY, *mgF, *mgZ;  /* RK stage states, slopes and adjoint stage products (rks > 1) */
  Vec           mgG;
  PetscInt      mgnvec, mgnst;    /* samples and stages the work Vecs above were made for (-1: none) */
  PetscScalar  *mggrad;           /* the block's gradient slice while the adjoint accumulates this rank's steps */
  PetscInt      osevery, osmax;   /* one-shot schedule: one more iteration every osevery gradients, up to osmax */
  PetscInt      ngrad;            /* gradients computed (backward passes) */
  /* f's activations at the owned steps' start states during an adjoint solve (forward Euler, dense/pointwise f):
     every adjoint step from u_k, fine or coarse, evaluates f(u_k, theta_k, t_k), so f runs forward once per step */
  PetscBool     mgcache;          /* in use for this pass */
  Vec          *mgacts;           /* [(k - ks) * nchildren + child] */
  PetscBool    *mgactok;          /* per owned step: its activations are those of the current forward states */
  PetscInt      mgnact, mgks;     /* owned steps cached, the first one */

  /* statistics */
  PetscInt       nstored;   /* states held for the backward pass at its peak */
  PetscLogDouble bytes;     /* their bytes */
  PetscLogDouble tfwd, tadj, trec;
} NNLayer_ODE;

/* ts/ode/odeblock_ts.c */
PETSC_INTERN PetscLogEvent NN_ODEForward, NN_ODEAdjoint, NN_ODERecompute;
PETSC_INTERN PetscErrorCode NNODERegisterEvents(void);
PETSC_INTERN PetscErrorCode NNODEPrepareVecs(NNLayer, PetscInt, Vec, PetscBool);
PETSC_INTERN PetscErrorCode NNODEPointChildren(NNLayer, PetscInt, PetscScalar *);
PETSC_INTERN PetscErrorCode NNODEEvalField(NNLayer, PetscInt, PetscReal, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEBackwardField(NNLayer, PetscInt, PetscReal, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEAddParameterGradient(NNLayer, PetscInt, PetscReal, const PetscScalar *);
PETSC_INTERN PetscErrorCode NNODECreateTS(NNLayer);
PETSC_INTERN PetscErrorCode NNODEDestroyTS(NNLayer);
PETSC_INTERN PetscErrorCode NNODEForwardTS(NNLayer, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEBackwardTS(NNLayer, PetscInt, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEStateBytes(NNLayer, PetscLogDouble *);
PETSC_INTERN PetscErrorCode NNODEDestroyActs(NNLayer);
/* ts/ode/odeblock_discrete.c */
PETSC_INTERN PetscErrorCode NNODEForwardDiscrete(NNLayer, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEBackwardDiscrete(NNLayer, PetscInt, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEDestroyDiscrete(NNLayer);
/* ts/ode/odeblock_mgrit.c */
PETSC_INTERN PetscErrorCode NNODESetFromOptions_MGRIT(NNLayer, PetscOptionItems *);
PETSC_INTERN PetscErrorCode NNODESetUp_MGRIT(NNLayer);
PETSC_INTERN PetscErrorCode NNODEReset_MGRIT(NNLayer);
PETSC_INTERN PetscErrorCode NNODEDestroy_MGRIT(NNLayer);
PETSC_INTERN PetscErrorCode NNODEForwardMGRIT(NNLayer, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEBackwardMGRIT(NNLayer, PetscInt, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEView_MGRIT(NNLayer, PetscViewer);
PETSC_INTERN PetscErrorCode NNODECompose_MGRIT(NNLayer, PetscBool);
PETSC_INTERN PetscErrorCode NNODECheck_MGRIT(NNLayer);
/* shared by both schemes (ts/ode/odeblock*.c) */
PETSC_INTERN PetscErrorCode NNODECopyIn(NNLayer, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEObserve(NNLayer, PetscInt, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEAddObservationGradient(NNLayer, PetscInt, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEObservationIndex(NNLayer, PetscInt, PetscInt *);
