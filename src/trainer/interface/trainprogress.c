/*
   Progress inside an epoch (-nn_monitor_steps k): every k optimizer steps rank 0 prints the epoch,
   the step, the batch i/n, the running mean loss of the epoch, samples/s and the time left in the
   epoch, from what it knows already (no communication). On a terminal the line is a bar redrawn
   with '\r'; elsewhere (files, CI logs) plain lines whose time-dependent fields are all printed as
   floating-point numbers, which the test harness masks.
*/
#include <petnn/private/trainerimpl.h>
#include <stdlib.h>
#include <unistd.h>

#define NN_BAR_WIDTH 24

/* the bar "[=======>       ]" for done of n batches */
static void NNProgressBar(PetscInt done, PetscInt n, char bar[NN_BAR_WIDTH + 3])
{
  PetscInt full = n > 0 ? (done * NN_BAR_WIDTH) / n : NN_BAR_WIDTH;

  bar[0] = '[';
  for (PetscInt i = 0; i < NN_BAR_WIDTH; i++) bar[i + 1] = i < full ? '=' : (i == full ? '>' : ' ');
  bar[NN_BAR_WIDTH + 1] = ']';
  bar[NN_BAR_WIDTH + 2] = 0;
}

/* whether fp is a terminal; Open MPI's mpiexec gives its processes a pseudo-terminal even when its
   own output goes to a file, so there the answer is no (-nn_monitor_steps_tty 1 forces the bar) */
static PetscBool NNStdoutIsTerminal(FILE *fp)
{
  if (getenv("OMPI_COMM_WORLD_SIZE")) return PETSC_FALSE;
  return (PetscBool)isatty(fileno(fp));
}

static PetscBool NNProgressBarWanted(NNTrainerMonitors *m, FILE *fp)
{
  return (PetscBool)(m->tty == 1 || (m->tty == PETSC_DECIDE && NNStdoutIsTerminal(fp)));
}

/* after batch b of the epoch (its optimizer step taken): the progress line when it is due */
PetscErrorCode NNTrainMonitorProgress(NN net, NNTrainLoop *c, PetscInt b)
{
  NNTrainerMonitors *m = &c->tr->mon;
  PetscMPIInt        rank;
  PetscBool          last = (PetscBool)(b + 1 == c->nbatches), due;
  PetscLogDouble     now, dt;
  PetscInt           seen, run, done;
  PetscReal          loss, rate, eta;
  FILE              *fp = PETSC_STDOUT;
  char               head[64];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)net), &rank));
  if (rank) PetscFunctionReturn(0);
  if (b == c->batch0) m->bar = NNProgressBarWanted(m, fp); /* decided at the first batch of each epoch */
  due = (PetscBool)(c->cur->step % m->steps == 0 || (m->bar && last));
  if (!due) PetscFunctionReturn(0);
  PetscCall(PetscTime(&now));
  dt   = now - c->tepoch;
  seen = PetscMin((b + 1) * c->B, c->N);  /* samples of the epoch behind the running loss */
  run  = seen - c->batch0 * c->B;         /* of them, trained in this run (a restart may start mid-epoch) */
  done = b + 1 - c->batch0;
  loss = c->cur->epoch_loss / seen;
  rate = dt > 0 ? run / dt : 0.0;
  eta  = done > 0 ? (c->nbatches - b - 1) * (dt / done) : 0.0;
  PetscCall(PetscSNPrintf(head, sizeof(head), "[epoch %" PetscInt_FMT "/%" PetscInt_FMT "]", c->cur->epoch + 1, c->tr->epochs));
  if (m->bar) {
    char bar[NN_BAR_WIDTH + 3];

    NNProgressBar(b + 1, c->nbatches, bar);
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\r%s %s %" PetscInt_FMT "/%" PetscInt_FMT "  step %" PetscInt_FMT "  loss %.4g  %.1f samples/s  ETA %.1f s   %s", head, bar, b + 1, c->nbatches, c->cur->step, (double)loss, (double)rate, (double)eta, last ? "\n" : ""));
  } else {
    char l[32]; /* the loss as the -nn_monitor line prints it */

    if (net->lossops.classification) PetscCall(PetscSNPrintf(l, sizeof(l), "%.4f", (double)loss));
    else PetscCall(PetscSNPrintf(l, sizeof(l), "%.6e", (double)loss));
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "  %s step %" PetscInt_FMT "  batch %" PetscInt_FMT "/%" PetscInt_FMT "  loss %s  %.1f samples/s  ETA %.1f s\n", head, c->cur->step, b + 1, c->nbatches, l, (double)rate, (double)eta));
  }
  if (fflush(fp)) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write the progress of -nn_monitor_steps to standard output");
  PetscFunctionReturn(0);
}

/* the progress of an evaluation (NNEvaluate(), the test set after an epoch), which can take longer
   than a few training steps: done of N samples evaluated since t0; called with done = N at the end,
   which ends the bar */
PetscErrorCode NNEvaluateMonitorProgress(NN net, PetscInt done, PetscInt N, PetscLogDouble t0)
{
  NNTrainerMonitors *m = &net->trainer->mon;
  PetscMPIInt        rank;
  PetscBool          bar;
  PetscLogDouble     now, dt;
  PetscReal          rate, eta;
  FILE              *fp = PETSC_STDOUT;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)net), &rank));
  if (rank) PetscFunctionReturn(0);
  bar = NNProgressBarWanted(m, fp);
  if (done == N && !bar) PetscFunctionReturn(0);
  PetscCall(PetscTime(&now));
  dt   = now - t0;
  rate = dt > 0 ? done / dt : 0.0;
  eta  = done > 0 ? (N - done) * (dt / done) : 0.0;
  if (bar) {
    char b[NN_BAR_WIDTH + 3];

    NNProgressBar(done, N, b);
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\r[evaluating] %s %" PetscInt_FMT "/%" PetscInt_FMT " samples  %.1f samples/s  ETA %.1f s   %s", b, done, N, (double)rate, (double)eta, done == N ? "\n" : ""));
  } else PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "  [evaluating] %" PetscInt_FMT "/%" PetscInt_FMT " samples  %.1f samples/s  ETA %.1f s\n", done, N, (double)rate, (double)eta));
  if (fflush(fp)) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write the progress of -nn_monitor_steps to standard output");
  PetscFunctionReturn(0);
}
