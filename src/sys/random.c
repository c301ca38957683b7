/* Deterministic, checkpointable random numbers: xoshiro256** seeded through splitmix64. */
#include <petnn/private/nnimpl.h>
#include <string.h>

static uint64_t SplitMix64(uint64_t *x)
{
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static inline uint64_t Rotl(uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

void NNRandomSeed(NNRandom *r, uint64_t seed)
{
  for (int i = 0; i < 4; i++) r->s[i] = SplitMix64(&seed);
}

/* one xoshiro256** step of the state s (inline, so a loop over a local copy keeps it in registers) */
static inline uint64_t XoshiroStep(uint64_t s[4])
{
  uint64_t result = Rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = Rotl(s[3], 45);
  return result;
}

uint64_t NNRandomNext(NNRandom *r)
{
  return XoshiroStep(r->s);
}

PetscReal NNRandomUniform(NNRandom *r)
{
  return (PetscReal)(NNRandomNext(r) >> 11) * 0x1.0p-53;
}

/*
   NNRandomMask - n draws of NNRandomUniform() in turn, the i-th written as a where it is >= p and 0 where not, into m
   (float entries when single, else double): dropout's masks, equal to that loop entry by entry. The draw
   u = k 2^-53 (k = x >> 11) is >= p exactly when the integer k >= ceil(p 2^53) (p 2^53 is exact), so the entry is
   a's bits masked by an integer comparison: no branch (a mask of random bits mispredicts one every other entry) and
   the generator's state in registers, 5-7 times the loop's rate.
*/
void NNRandomMask(NNRandom *r, PetscInt n, PetscReal p, PetscReal a, PetscBool single, void *m)
{
  uint64_t       s[4] = {r->s[0], r->s[1], r->s[2], r->s[3]};
  const uint64_t T    = (uint64_t)PetscCeilReal(p * 0x1.0p53);
  union {
    float    f;
    uint32_t u;
  } af = {(float)a};
  union {
    double   d;
    uint64_t u;
  } ad = {a};

  for (PetscInt i = 0; i < n; i++) {
    uint64_t keep = (uint64_t)((XoshiroStep(s) >> 11) >= T);

    if (single) {
      uint32_t b = af.u & (uint32_t)-(uint32_t)keep;
      memcpy((float *)m + i, &b, sizeof(b)); /* the bits into a float entry (memcpy: no aliasing through a cast) */
    } else {
      uint64_t b = ad.u & -keep;
      memcpy((double *)m + i, &b, sizeof(b));
    }
  }
  for (int k = 0; k < 4; k++) r->s[k] = s[k];
}

/* Fisher-Yates with an unbiased bounded draw */
void NNRandomShuffle(NNRandom *r, PetscInt n, PetscInt perm[])
{
  for (PetscInt i = n - 1; i > 0; i--) {
    uint64_t bound = (uint64_t)i + 1, threshold = -bound % bound, x;
    do x = NNRandomNext(r);
    while (x < threshold);
    PetscInt j = (PetscInt)(x % bound), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

/* advances the generator by k draws */
void NNRandomSkip(NNRandom *r, PetscInt64 k)
{
  for (PetscInt64 i = 0; i < k; i++) (void)NNRandomNext(r);
}
