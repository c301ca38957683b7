/* Private structs of the neural-ODE block (ts/ode/odeblock*.c): layer type "ode".

   As SLEPc's krylovschur.h with its ks-*.c variants: one block struct (NNLayer_ODE) with what every
   scheme needs (the configuration, f's children and Vecs, the time grid, the parameter layout) and a
   scheme (NNODESchemeOps, chosen from -<block>_scheme and -<block>_parallel) with its own data in
   schemedata: NNODE_TS (odeblock_ts*.c), NNODE_Discrete (odeblock_discrete.c) and NNODE_MGRIT
   (odeblock_mgrit*.c). */
#pragma once

#include <petnn/private/containerimpl.h>
#include <petscts.h>
#include <petnn/private/mgritimpl.h>

#define NN_ODE_MAX_STAGES 16
#define NN_ODE_KIND       "ODE block" /* starts the container's error messages */

/* a Vec's identity and state: is it still the same point? */
typedef struct {
  PetscObjectId    id;
  PetscObjectState state;
} NNODEStamp;

/* where f was last evaluated or differentiated: state U, step k, time t */
typedef struct {
  NNODEStamp u;
  PetscInt   k;
  PetscReal  t;
  PetscBool  valid;
} NNODEPoint;

/* f's evaluation and its backward pass (odeblock_field.c), shared by every scheme */
typedef struct {
  Vec         *cur;      /* per child: the Vec holding its output from the last forward evaluation */
  Vec          fin, dfin; /* time input: f's augmented input and its gradient */
  Vec          F, gx;    /* f's value at a point; (df/du)^T V of the last backward pass (n samples) */
  PetscScalar *gp;       /* (df/dtheta_k)^T V of the last backward pass: one copy's P entries */
  NNODEPoint   fwd;      /* where the children last ran forward (they keep what backward needs) */
  NNODEPoint   bwd;      /* the last backward pass, cached: both J^T v and Jp^T v need it */
  NNODEStamp   bwdv;     /* and its output gradient V */
} NNODEField;

/* the block's TS, made for the activation layout and configured by -<block>_ts_*: the ts scheme's
   integrator, the tableau of the mgrit scheme's propagators, and what NNLayerODEGetTS() returns */
typedef struct {
  TS          ts;
  PetscInt    nstages;                /* stage abscissae, to recover exact stage times */
  PetscReal   c[NN_ODE_MAX_STAGES];
  PetscBool   implicit;               /* theta methods: Newton solves with matrix-free J v */
  PetscBool   fsal;                   /* an RK tableau whose last stage is the next step's first */
  PetscMPIInt rank, size;             /* in the TS's communicator */
} NNODEIntegrator;

/* storage and time statistics (NNLayerODEGetStorage(), NNLayerODEGetTimes()) */
typedef struct {
  PetscInt       nstored;   /* states held for the backward pass at its peak */
  PetscInt       actstored; /* stages whose activations the last training forward pass keeps at the peak */
  PetscLogDouble actbytes;  /* bytes of f's kept activations per stage */
  PetscLogDouble tfwd, tadj, trec;
} NNODEStats;

/* a scheme: how the block integrates forward and differentiates backward */
typedef struct {
  const char *name;                                                 /* for views */
  PetscErrorCode (*create)(NNLayer);                                /* makes schemedata */
  PetscErrorCode (*destroy)(NNLayer);                               /* frees schemedata and everything in it */
  PetscErrorCode (*setfromoptions)(NNLayer);                        /* inside the block's options section */
  PetscErrorCode (*setup)(NNLayer);                                 /* at the block's set-up (shapes known) */
  PetscErrorCode (*layout)(NNLayer);                                /* f's Vecs are made for the activation layout */
  PetscErrorCode (*reset)(NNLayer);                                 /* frees what set-up and the passes made */
  PetscErrorCode (*forward)(NNLayer, PetscInt, Vec, Vec);
  PetscErrorCode (*backward)(NNLayer, PetscInt, Vec, Vec, Vec);
  PetscErrorCode (*stageacts)(NNLayer, PetscInt, Vec, PetscBool, Vec **); /* Vecs keeping f's activations at a stage */
  PetscErrorCode (*storage)(NNLayer, PetscInt *, PetscLogDouble *); /* per step kept by full storage, their activation bytes */
  PetscErrorCode (*view)(NNLayer, PetscViewer);
} NNODESchemeOps;

PETSC_INTERN const NNODESchemeOps NNODESchemeOps_TS, NNODESchemeOps_Discrete, NNODESchemeOps_MGRIT;

/* single precision (-nn_precision single, odeblock_single.c): the explicit tableau integrated in float */
typedef struct {
  PetscInt  s;                                          /* stages (0: this configuration runs the double passes) */
  PetscReal a[NN_ODE_MAX_STAGES * NN_ODE_MAX_STAGES], b[NN_ODE_MAX_STAGES], c[NN_ODE_MAX_STAGES];
  PetscInt  m, mpass;    /* entries of a state array (the batch capacity), and those a pass computes */
  PetscInt *clen, slot;  /* entries of child c's output; of one stage's data (Y_i, [Y_i, t], every child's output) */
  PetscInt  mt;          /* entries of f's input [Y_i, t] per stage with -<block>_time_input (else 0) */
  float    *u;           /* the states u_0..u_kend */
  float    *stages;      /* stage data of every step (stored activations) or of one step (evaluated again) */
  float    *work;        /* the adjoint's arrays */
  PetscInt  nu, nstages; /* states and stage slots allocated */
  PetscBool kept;        /* the last forward pass kept every step's stages */
} NNODESingle;

/* on a device (-nn_device cuda, odeblock_cuda.c): the same explicit tableau (NNODESingle's s, a, b, c and layout) on
   device arrays in the precision of the passes, through the children's device passes */
typedef struct {
  void     *u, *stages, *work; /* as NNODESingle's */
  PetscInt  nu, nstages;
  size_t    es;                /* sizeof(double) or sizeof(float) */
  PetscBool kept;
} NNODEDevice;

typedef struct {
  /* configuration */
  PetscReal       T;         /* final time */
  PetscInt        N;         /* fixed steps, h = T/N */
  NNODEParameters params;    /* shared or one set per step */
  NNODEScheme     scheme;    /* TS or hand-written discrete residual stack */
  NNODEParallel   parallel;  /* layer-serial, or MGRIT over the steps (the mgrit scheme) */
  PetscInt        K;         /* stored states for the backward pass (0: every step) */
  PetscBool       timeinput; /* t is an extra input feature of f */
  PetscBool       storeacts; /* -store_activations: keep f's activations where the scheme can */
  PetscInt        nobs;      /* observation times (0: the output is u(T)) */
  PetscReal      *tobs;
  PetscInt       *kobs;      /* their step indices */
  PetscInt        mgranks;   /* ranks per MGRIT group (-<blk>_mgrit_ranks; 0: the whole layer communicator) */
  PetscInt        osevery, osmax; /* one-shot MGRIT schedule: one more iteration every osevery gradients, up to osmax */

  /* derived at set up */
  PetscReal h;
  PetscInt  S;     /* entries of one sample's state */
  PetscInt  Sin;   /* entries of one sample's input of f (S + 1 with time input) */
  PetscInt  P, B;  /* parameters and buffer entries of one copy of f */
  PetscInt *cpoff, *cboff; /* child c's offsets within one copy */
  PetscInt  kend;  /* steps integrated: N, or the last observation's step */

  /* f: its children's Vecs (as a residual block wires them) and its evaluation */
  NNLayerContainer f;   /* f.out[c]: output of child c; f.dout[c]: its gradient (the last is NULL) */
  DM               dm;  /* the input's DM (NULL: sequential) */
  NNODEField       fld;
  PetscInt         n;   /* samples of the current pass */

  /* state Vecs of a pass (odeblock_field.c: NNODEPrepareVecs()) */
  Vec      U, lambda;
  PetscInt nU; /* samples they hold (-1: DMDA layout, -2: none) */

  /* -spectrum_* and -stability_check (ts/ode/odeblock_spectrumview.c): what NNSpectralViewFromOptions() reports */
  struct {
    PetscBool           view;          /* -spectrum_view */
    PetscBool           smallest;      /* -spectrum_smallest: also the smallest-magnitude eigenvalues */
    NNODEStabilityCheck check;         /* -stability_check */
    PetscInt            samples, nev;  /* test samples, eigenvalues of each kind */
    PetscInt            nsteps, steps[16]; /* states u_k at these steps */
    PetscReal           stiff;         /* stiffness ratio above which an implicit method is suggested */
    char                bad[16];       /* an invalid -stability_check value, refused at set up */
  } spec;

  NNODEIntegrator       integ;
  const NNODESchemeOps *ops;        /* the scheme in use */
  void                 *schemedata; /* its data */
  PetscBool             recorded;   /* a training forward pass recorded what the backward pass needs */
  NNODEStats            stats;
  NNODESingle           single;
  NNODEDevice           device;
} NNLayer_ODE;

/* ts/ode/odeblock_field.c: f, observations and state Vecs, shared by the schemes */
PETSC_INTERN PetscLogEvent NN_ODEForward, NN_ODEAdjoint, NN_ODERecompute;
PETSC_INTERN PetscErrorCode NNODERegisterEvents(void);
PETSC_INTERN const char    *NNODEPrefix(NNLayer);
PETSC_INTERN PetscErrorCode NNODEPrepareVecs(NNLayer, PetscInt, Vec);
PETSC_INTERN PetscErrorCode NNODEDestroyStateVecs(NNLayer);
PETSC_INTERN PetscErrorCode NNODEPointChildren(NNLayer, PetscInt, PetscScalar *);
PETSC_INTERN PetscErrorCode NNODEEvalField(NNLayer, PetscInt, PetscReal, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEBackwardField(NNLayer, PetscInt, PetscReal, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEAddParameterGradient(NNLayer, PetscInt, PetscReal, const PetscScalar *);
PETSC_INTERN PetscErrorCode NNODEStateBytes(NNLayer, PetscLogDouble *);
PETSC_INTERN PetscErrorCode NNODECopyState(NNLayer, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEObserve(NNLayer, PetscInt, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEAddObservationGradient(NNLayer, PetscInt, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEObservationIndex(NNLayer, PetscInt, PetscInt *);
/* ts/ode/odeblock_single.c: the explicit schemes in float */
PETSC_INTERN PetscErrorCode NNODESingleSelect(NNLayer);
PETSC_INTERN PetscErrorCode NNODESingleReset(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerForwardSingle_ODE(NNLayer, PetscInt, const float *, float *);
PETSC_INTERN PetscErrorCode NNLayerBackwardSingle_ODE(NNLayer, PetscInt, const float *, const float *, const float *, float *);
PETSC_INTERN PetscErrorCode NNODESingleLayout(NNLayer);
PETSC_INTERN PetscBool      NNODESingleKeepsStages(NNLayer);
/* checkpointing in the float and device passes: steps per segment, segments (0: none), states the arrays hold */
PETSC_INTERN void NNODESegments(NNLayer, PetscInt *, PetscInt *, PetscInt *);
/* ts/ode/odeblock_cuda.c: the explicit schemes on the device (built with PETNN_HAVE_CUDA) */
PETSC_INTERN PetscErrorCode NNODEDeviceReset(NNLayer);
#if defined(PETNN_HAVE_CUDA)
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_ODE(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_ODE(NNLayer, PetscInt, const void *, const void *, const void *, void *);
#endif
/* ts/ode/odeblock_integrator.c: the block's TS */
PETSC_INTERN PetscErrorCode NNODECreateTS(NNLayer);
PETSC_INTERN PetscErrorCode NNODEDestroyTS(NNLayer);
/* ts/ode/odeblock.c: the scheme in use, from -scheme and -parallel */
PETSC_INTERN PetscErrorCode NNODESchemeSelect(NNLayer);
/* ts/ode/odeblock_spectrumview.c: -spectrum_* and -stability_check */
PETSC_INTERN PetscErrorCode NNODESetFromOptions_Spectrum(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNODESpectrumCheckOptions(NNLayer);
/* ts/ode/odeblock_api.c: the type-specific setters, composed on the block */
PETSC_INTERN PetscErrorCode NNODEComposeSetters(NNLayer, PetscBool);
/* ts/ode/odeblock_tsfun.c: the TS scheme's callbacks */
PETSC_INTERN PetscErrorCode NNODEWireTS(NNLayer);
PETSC_INTERN PetscErrorCode NNODEActivationsAllowed(NNLayer);
PETSC_INTERN PetscErrorCode NNODEActsBegin(NNLayer, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode NNODEDestroyActs(NNLayer);
PETSC_INTERN PetscErrorCode NNODEStageActs_TS(NNLayer, PetscInt, Vec, PetscBool, Vec **);
/* ts/ode/odeblock_mgrit*.c: the mgrit scheme */
PETSC_INTERN PetscErrorCode NNODESetFromOptions_MGRIT(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNODECompose_MGRIT(NNLayer, PetscBool);
PETSC_INTERN PetscErrorCode NNODEMGRITTableau(NNLayer);
PETSC_INTERN PetscErrorCode NNODEMGRITCacheAllowed(NNLayer, PetscBool *);
PETSC_INTERN PetscErrorCode NNODEMGRITCacheSetUp(NNLayer);
PETSC_INTERN PetscErrorCode NNODEMGRITDestroyVecs(NNLayer);
PETSC_INTERN PetscErrorCode NNODEMGRITStep(void *, PetscInt, PetscInt, PetscReal, PetscReal, Vec, Vec);
PETSC_INTERN PetscErrorCode NNODEMGRITAdjointStep(void *, PetscInt, PetscInt, PetscReal, PetscReal, Vec, Vec, Vec, PetscBool);

/* the ts scheme (odeblock_ts.c, odeblock_tsfun.c): TSSolve forward, TSAdjointSolve backward */
typedef struct {
  Mat          J, Jp, mffd;  /* df/du and df/dtheta as MATSHELLs; MatMFFD for the implicit stages' J v */
  Vec          F0, mu;       /* the base point of the differenced J v; the parameter gradient of one step */
  PetscScalar *mubuf;        /* one step's parameter gradient, on every rank */
  PetscInt     nstagevecs;   /* stage Vecs the trajectory stores per step */
  Vec          jU, jpU;      /* the Jacobians' linearization points: state, step, time */
  PetscInt     jk, jpk;
  PetscReal    jt, jpt;
  /* forward record for the backward pass */
  Vec      *bnd;         /* checkpoints: the state at the start of each segment */
  PetscInt  L, nseg;     /* segment length and count */
  Vec       yout;        /* the pass's output (observations are copied into it by the post-step hook) */
  PetscBool inrecompute; /* a segment re-solve: the post-step hook records nothing */
  /* f's intermediate activations at every stage of the recorded steps, so the adjoint skips the forward
     re-evaluation (RK, and children whose backward pass needs only their input and output) */
  PetscBool  actsok;     /* f and the integrator allow it */
  PetscBool  storing;    /* a recording solve is running */
  PetscBool *actneed;    /* per child: its output is kept */
  Vec       *acts;       /* [slot * nchildren + child], slot = (k - actk0) * nstages + stage */
  PetscInt  *actpass;    /* per slot: the pass that wrote it */
  PetscInt   nslots, actk0, actsteps, passid;
} NNODE_TS;

/* the discrete scheme (odeblock_discrete.c): the residual stack with hand-written passes */
typedef struct {
  Vec     *xs;      /* every state x_k */
  PetscInt nxs, xsn; /* how many, and for which sample count (-1: DMDA) */
} NNODE_Discrete;

/* the mgrit scheme (odeblock_mgrit*.c): MGRIT over the steps, the ranks of mgcomm each owning a chunk */
typedef struct {
  MPI_Comm     mgparent;  /* duplicate of the layer communicator the MGRIT group was split from */
  MPI_Comm     mgcomm;    /* the MGRIT group: the "layer" communicator of the time chunks */
  NNMGRIT      mg;
  PetscInt     mgn;       /* samples of the MGRIT state template (-1: none yet) */
  PetscInt     rks;       /* the propagator's explicit RK tableau (1fe for the discrete scheme) */
  PetscReal    rkA[NN_ODE_MAX_STAGES * NN_ODE_MAX_STAGES], rkb[NN_ODE_MAX_STAGES], rkc[NN_ODE_MAX_STAGES];
  Vec          mgu, mgl, mgl0;  /* u_0 (and u_N), lambda_N, lambda_0 of a pass */
  Vec         *mgY, *mgF, *mgZ; /* RK stage states, slopes and adjoint stage products (rks > 1) */
  Vec          mgG;
  PetscInt     mgnvec, mgnst;   /* samples and stages the work Vecs above were made for (-1: none) */
  PetscScalar *mggrad;          /* the block's gradient slice while the adjoint accumulates this rank's steps */
  PetscInt     ngrad;           /* gradients computed (backward passes) */
  /* f's activations at the owned steps' start states during an adjoint solve (forward Euler, dense/pointwise f):
     every adjoint step from u_k, fine or coarse, evaluates f(u_k, theta_k, t_k), so f runs forward once per step */
  PetscBool    mgcache;         /* in use for this pass */
  Vec         *mgacts;          /* [(k - ks) * nchildren + child] */
  PetscBool   *mgactok;         /* per owned step: its activations are those of the current forward states */
  PetscInt     mgnact, mgks;    /* owned steps cached, the first one */
} NNODE_MGRIT;
