/* A convolution pass on threads, a precision template (include/petnn/private/nnrealdouble.h) that conv_run.c compiles
   in double (either algorithm) and in float. */
#define NN_CONV_PASS PetscConcat(NNConvPass, NN_SUFFIX)
#define NN_CONV_TASK PetscConcat(NNConvTask, NN_SUFFIX)

static void *PetscConcat(NNConvTaskRun, NN_SUFFIX)(void *arg)
{
  NN_CONV_TASK *w = (NN_CONV_TASK *)arg;

  if (w->pass->y) {
    if (w->g->alg == NN_CONV_WINOGRAD) PetscConcat(NNConvWinogradForward, NN_SUFFIX)(w);
    else if (w->g->alg == NN_CONV_DIRECT) PetscConcat(NNConvDirectForward, NN_SUFFIX)(w);
    else PetscConcat(NNConvIm2colForward, NN_SUFFIX)(w);
  } else {
    if (w->g->alg == NN_CONV_WINOGRAD) PetscConcat(NNConvWinogradBackward, NN_SUFFIX)(w);
    else if (w->g->alg == NN_CONV_DIRECT) PetscConcat(NNConvDirectBackward, NN_SUFFIX)(w);
    else PetscConcat(NNConvIm2colBackward, NN_SUFFIX)(w);
  }
  return NULL;
}

/*
   NNConvRun - one forward (pass->y set) or backward (pass->dy set) pass over the owned outputs and
   the first g->ns slots

   Input Parameters:
+  g        - the geometry
.  pass     - what to compute
.  nthreads - threads to split the pass over
.  work     - workspace of NNConvWorkspaceSize() scalars
-  iwork    - and integers

   Output Parameter:
.  flops - floating-point operations done
*/
PetscErrorCode PetscConcat(NNConvRun, NN_SUFFIX)(const NNConvGeom *g, const NN_CONV_PASS *pass, PetscInt nthreads, NN_REAL *work, PetscInt *iwork, PetscLogDouble *flops)
{
  NN_CONV_TASK task[NN_CONV_MAX_THREADS];
  pthread_t    thr[NN_CONV_MAX_THREADS];
  PetscBool    forward = pass->y ? PETSC_TRUE : PETSC_FALSE, byslot = (PetscBool)(!forward && pass->dx);
  PetscInt     T, units = g->alg == NN_CONV_WINOGRAD ? g->w.ntiles : g->npix, nunits = byslot ? g->ns : units, ws, wi, acc, nacc;
  NN_REAL     *accs;

  PetscFunctionBegin;
  NNConvTaskSizes(g, &ws, &wi, &acc);
  nacc = acc - g->Cout;
  T    = PetscMax(1, PetscMin(PetscMin(nthreads, NN_CONV_MAX_THREADS), nunits));
  accs = work + nthreads * ws;
  for (PetscInt t = 0; t < T; t++) {
    NN_CONV_TASK *w = &task[t];
    PetscInt    u0 = (nunits * t) / T, u1 = (nunits * (t + 1)) / T;
    w->g     = g;
    w->pass  = pass;
    w->q0    = byslot ? 0 : u0;
    w->q1    = byslot ? units : u1;
    w->s0    = byslot ? u0 : 0;
    w->s1    = byslot ? u1 : g->ns;
    w->work  = work + t * ws;
    w->iwork = iwork + t * wi;
    w->flops = 0;
    w->dW    = forward ? NULL : pass->dW;
    w->db    = forward ? NULL : pass->db;
    if (t > 0 && !forward) { /* private accumulators, summed below */
      NN_REAL *a = accs + (t - 1) * acc;
      w->dW          = pass->dW ? a : NULL;
      w->db          = pass->db ? a + nacc : NULL;
      if (w->dW) PetscCall(PetscArrayzero(w->dW, nacc));
      if (w->db) PetscCall(PetscArrayzero(w->db, g->Cout));
    }
  }
  if (T > 1) {
    PetscInt started = 1;
    int      err     = 0, nblas = openblas_get_num_threads();
    openblas_set_num_threads(1);
    for (; started < T; started++) {
      err = pthread_create(&thr[started], NULL, PetscConcat(NNConvTaskRun, NN_SUFFIX), &task[started]);
      if (err) break;
    }
    PetscConcat(NNConvTaskRun, NN_SUFFIX)(&task[0]);
    for (PetscInt t = 1; t < started; t++) pthread_join(thr[t], NULL);
    openblas_set_num_threads(nblas);
    PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_SYS, "Convolution: cannot start a thread (pthread_create error %d); use fewer threads (-<layer prefix>threads)", err);
    for (PetscInt t = 1; t < T; t++) {
      if (task[t].dW)
        for (PetscInt i = 0; i < nacc; i++) pass->dW[i] += task[t].dW[i];
      if (task[t].db)
        for (PetscInt i = 0; i < g->Cout; i++) pass->db[i] += task[t].db[i];
    }
  } else PetscConcat(NNConvTaskRun, NN_SUFFIX)(&task[0]);
  *flops = 0;
  for (PetscInt t = 0; t < T; t++) *flops += task[t].flops;
  PetscFunctionReturn(0);
}

#undef NN_CONV_PASS
#undef NN_CONV_TASK
