/*
   Load balancing of data-parallel training: the data groups split each global minibatch in
   proportion to how fast each of them has been computing, instead of in equal shards.

   Synchronous data parallelism runs every step at the pace of the slowest group. When the cores
   are not equally fast (other processes, a shared host, different hardware) the faster groups
   wait at the all-reduce. The gradient of the global batch does not depend on how its samples are
   split (each group's mean gradient is weighted by its share, NNParallelStepBegin()), so the
   shards can follow the groups' speeds: after every step each group's samples per second of its
   forward+backward pass (the all-reduce excluded) enter an exponential average, reduced with the
   step's other numbers so that every rank computes the same shards. The trajectory equals the
   equal-shard one up to rounding, but it is no longer bitwise reproducible (the split depends on
   timings), so balancing is off by default.
*/
#include <petnn/private/trainerimpl.h>

/* the per-rank batch capacity for a global batch B: equal shards, or the largest balanced one */
PetscInt NNParallelBatchCapacity(NNParallel p, PetscInt B)
{
  PetscInt cap = (B + p->D - 1) / p->D;

  if (p->balance && p->D > 1) cap = PetscMin(B, PetscMax(cap, (PetscInt)PetscCeilReal(p->balance_max * (PetscReal)B / (PetscReal)p->D)));
  return cap;
}

/* start of training: speeds unknown (0), equal shards until every group has been timed */
PetscErrorCode NNParallelBalanceBegin(NN net, PetscInt cap)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  PetscCall(PetscFree(p->speed));
  PetscCall(PetscMalloc1(p->D, &p->speed));
  for (PetscInt g = 0; g < p->D; g++) p->speed[g] = 0;
  p->cap      = cap;
  p->sharemin = PETSC_MAX_REAL;
  p->sharemax = 0;
  PetscFunctionReturn(0);
}

/* the shard [first, last) of group g of a batch of n samples in proportion to the speeds: floor of
   the proportional counts, capped at cap, the remaining samples to the groups with the largest
   fractional parts that have room; at least one sample per group when n >= D. The same
   arithmetic on every rank gives the same shards. */
static void NNParallelBalancedShard(NNParallel p, PetscInt n, PetscInt g, PetscInt *first, PetscInt *last)
{
  PetscInt  D = p->D, cnt[64], left = n, c0, untimed = 0;
  PetscReal W = 0, frac[64];

  for (PetscInt h = 0; h < D; h++) untimed += p->speed[h] > 0 ? 0 : 1;
  if (D > 64 || untimed) { /* many groups, or not every group timed yet: equal shards */
    NNParallelShard(n, g, D, first, last);
    return;
  }
  c0 = n >= D ? 1 : 0;
  for (PetscInt h = 0; h < D; h++) W += p->speed[h];
  for (PetscInt h = 0; h < D; h++) {
    PetscReal x = (PetscReal)(n - c0 * D) * p->speed[h] / W;
    cnt[h]      = PetscMin(p->cap - c0, (PetscInt)PetscFloorReal(x));
    frac[h]     = x - (PetscReal)cnt[h];
    cnt[h] += c0;
    left -= cnt[h];
  }
  while (left > 0) { /* one more sample to the group that is owed the most and has room */
    PetscInt best = -1;
    for (PetscInt h = 0; h < D; h++)
      if (cnt[h] < p->cap && (best < 0 || frac[h] > frac[best])) best = h;
    cnt[best]++;
    frac[best] -= 1;
    left--;
  }
  *first = 0;
  for (PetscInt h = 0; h < g; h++) *first += cnt[h];
  *last = *first + cnt[g];
}

/* the shard of this group for a batch of n samples */
void NNParallelStepShard(NNParallel p, PetscInt n)
{
  if (p->balance && p->D > 1) NNParallelBalancedShard(p, n, p->group, &p->first, &p->last);
  else NNParallelShard(n, p->group, p->D, &p->first, &p->last);
}

/* entries of the per-step reduction: one per data group of each trainer, this group's compute
   time of the step (from the first rank of its spatial group) */
PetscInt NNParallelBalanceSlots(NNParallel p)
{
  return p->balance && p->D > 1 ? p->K * p->D : 0;
}

void NNParallelBalancePut(NNParallel p, PetscReal *slots, PetscLogDouble tcompute)
{
  if (!NNParallelBalanceSlots(p) || p->srank || p->mrank) return;
  slots[p->trainer * p->D + p->group] = (PetscReal)tcompute;
}

/* after the reduction: update the speeds of this trainer's groups from their times for the shards
   of a batch of n samples */
void NNParallelBalanceUpdate(NNParallel p, const PetscReal *slots, PetscInt n)
{
  PetscInt cnt[64];

  if (!NNParallelBalanceSlots(p) || p->D > 64 || n == 0) return;
  for (PetscInt g = 0; g < p->D; g++) { /* the shards of the step just taken, before the speeds change */
    PetscInt first, last;
    NNParallelBalancedShard(p, n, g, &first, &last);
    cnt[g] = last - first;
  }
  for (PetscInt g = 0; g < p->D; g++) {
    PetscReal t = slots[p->trainer * p->D + g], s;
    if (!cnt[g] || t <= 0) continue;
    s           = (PetscReal)cnt[g] / t;
    p->speed[g] = p->speed[g] > 0 ? 0.5 * p->speed[g] + 0.5 * s : s;
    p->sharemin = PetscMin(p->sharemin, (PetscReal)(cnt[g] * p->D) / n);
    p->sharemax = PetscMax(p->sharemax, (PetscReal)(cnt[g] * p->D) / n);
  }
}
