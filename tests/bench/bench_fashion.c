/*
 * Fashion-MNIST training speed and accuracy: the MLP 784-256-256-10 or the
 * CNN of examples/c/fashion_mnist.c (whose trainer this includes), Adam lr 1e-3,
 * batch 64 in file order, for 2 epochs by default at 1 thread. Prints
 * ms per training step (forward, backward, optimizer step; batches built
 * from bytes included, evaluation excluded), in wall and in CPU time and the test accuracy as one
 * JSON line. bench_fashion_torch.py is the PyTorch twin; run_fashion.sh runs
 * both.
 *
 *   bench_fashion [--model mlp|cnn] [--data DIR] [--epochs N] [--threads N]
 *                 [--steps N] [--init-out FILE]
 *
 * --init-out FILE saves the initial parameters, from which
 * bench_fashion_torch.py --init FILE starts the same model.
 */
#define FASHION_MNIST_NO_MAIN
#include "../../examples/c/fashion_mnist.c"

int main(int argc, char **argv) {
  const char *dir = "/usr/share/datasets/fashion-mnist", *init_out = NULL;
  int epochs = 2, threads = 1, kind = FM_MLP;
  int64_t steps = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--data")) dir = argv[i + 1];
    else if (!strcmp(argv[i], "--epochs")) epochs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--steps")) steps = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--init-out")) init_out = argv[i + 1];
    else if (!strcmp(argv[i], "--model") && fm_model_kind(argv[i + 1]) >= 0) kind = fm_model_kind(argv[i + 1]);
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  fm_data train = {0}, test = {0};
  fm_model m;
  fm_result r;
  if (fm_load(&train, dir, "train") || fm_load(&test, dir, "t10k")) return 1;
  if (fm_init(&m, kind, threads, 0) || (init_out && fm_save(&m, init_out)) ||
      fm_train(&m, &train, &test, epochs, steps, 0, NULL, &r)) {
    return 1;
  }
  printf("{\"engine\": \"ag\", \"model\": \"%s\", \"threads\": %d, \"epochs\": %d, \"steps\": %lld, \"ms_per_step\": %.4f, "
         "\"cpu_ms_per_step\": %.4f, \"test_accuracy\": %.4f, \"last_loss\": %.4f}\n",
         kind == FM_CNN ? "cnn" : "mlp", threads, epochs, (long long)r.steps, 1e3 * r.train_seconds / (double)r.steps,
         1e3 * r.train_cpu_seconds / (double)r.steps, r.test_accuracy, r.last_loss);
  fm_free_model(&m);
  fm_free_data(&train);
  fm_free_data(&test);
  return 0;
}
