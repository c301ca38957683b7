/*
   Fuzz target: network construction from options (NNSetFromOptions, then NNSetUp).

   Input: text in the options-file form ("-key value" pairs, '#' comments, any whitespace). Every
   key gets the prefix fz_ (-fc1_units 3 becomes -fz_fc1_units 3) and the network the options prefix
   fz_, so the input configures the network, its layers, optimizer, loss and ODE blocks but not
   PETSc itself (no -options_file, -log_view, -on_error_abort). The network starts with samples of
   shape (4) and a batch of 2, which the input may change. A network that sets up is viewed.
*/
#define FUZZ_NAME options
#include "fuzz.h"
#include <ctype.h>

#define FUZZ_MAX_TOKEN 256
#define FUZZ_MAX_KEYS  64

/* next whitespace-separated token of s[*pos..n), skipping '#' comments to the end of the line */
static int FuzzNextToken(const char *s, size_t n, size_t *pos, char tok[])
{
  size_t k = 0;

  while (*pos < n) {
    if (s[*pos] == '#')
      while (*pos < n && s[*pos] != '\n') (*pos)++;
    else if (isspace((unsigned char)s[*pos]) || !s[*pos]) (*pos)++;
    else break;
  }
  if (*pos >= n) return 0;
  while (*pos < n && s[*pos] && !isspace((unsigned char)s[*pos]) && s[*pos] != '#') {
    if (k < FUZZ_MAX_TOKEN - 1) tok[k++] = s[*pos];
    (*pos)++;
  }
  tok[k] = 0;
  return 1;
}

static PetscErrorCode FuzzBuild(NN *net, PetscViewer *v)
{
  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_SELF, net));
  PetscCall(NNSetOptionsPrefix(*net, "fz_"));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){4}));
  PetscCall(NNSetBatchSize(*net, 2));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, "/dev/null", v));
  PetscCall(NNView(*net, *v));
  PetscFunctionReturn(0);
}

static int FuzzOne_options(const uint8_t *data, size_t size)
{
  const char *s   = (const char *)data;
  size_t      pos = 0;
  char        tok[FUZZ_MAX_TOKEN], key[FUZZ_MAX_TOKEN + 8] = "";
  int         nkeys = 0;
  NN          net   = NULL;
  PetscViewer v     = NULL;

  FuzzBegin();
  while (nkeys < FUZZ_MAX_KEYS && FuzzNextToken(s, size, &pos, tok)) {
    if (tok[0] == '-' && tok[1] && !isdigit((unsigned char)tok[1]) && tok[1] != '.') { /* a key; -3 is a value */
      if (key[0]) (void)PetscOptionsSetValue(NULL, key, NULL);
      snprintf(key, sizeof(key), "-fz_%s", tok + 1);
      nkeys++;
    } else if (key[0]) {
      (void)PetscOptionsSetValue(NULL, key, tok);
      key[0] = 0;
    }
  }
  if (key[0]) (void)PetscOptionsSetValue(NULL, key, NULL);
  (void)FuzzBuild(&net, &v);
  (void)PetscViewerDestroy(&v);
  (void)NNDestroy(&net);
  FuzzEnd();
  return 0;
}
