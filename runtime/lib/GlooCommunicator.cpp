//===- GlooCommunicator.cpp - One rank's Gloo communicator over TCP -------===//
//
// The only file of the runtime built with exceptions (see CMakeLists.txt):
// each member catches what Gloo throws and turns it into a Status.
//
//===----------------------------------------------------------------------===//

#include "dpc/Runtime/GlooCommunicator.h"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <exception>

using namespace dpc;

GlooCommunicator::GlooCommunicator(std::shared_ptr<gloo::Context> context)
    : context(std::move(context)) {}

GlooCommunicator::~GlooCommunicator() = default;

Status
GlooCommunicator::connect(int rank, int size, const std::string &storeDir,
                          const std::string &hostname,
                          std::chrono::milliseconds timeout,
                          std::unique_ptr<GlooCommunicator> &communicator) {
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    std::shared_ptr<gloo::transport::Device> device =
        gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    // Before connecting: the rendezvous waits for the other ranks this long.
    context->setTimeout(timeout);
    gloo::rendezvous::FileStore store(storeDir);
    context->connectFullMesh(store, device);
    communicator.reset(new GlooCommunicator(std::move(context)));
    return Status::success();
  } catch (const std::exception &e) {
    return Status::error(e.what());
  }
}

int GlooCommunicator::getRank() const { return context->rank; }

int GlooCommunicator::getSize() const { return context->size; }

Status GlooCommunicator::barrier() {
  try {
    gloo::BarrierOptions options(context);
    gloo::barrier(options);
    return Status::success();
  } catch (const std::exception &e) {
    return Status::error(e.what());
  }
}

Status GlooCommunicator::allReduceSum(float *data, size_t count) {
  try {
    gloo::AllreduceOptions options(context);
    options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    options.setOutput(data, count);
    options.setReduceFunction(
        static_cast<void (*)(void *, const void *, const void *, size_t)>(
            &gloo::sum<float>));
    gloo::allreduce(options);
    return Status::success();
  } catch (const std::exception &e) {
    return Status::error(e.what());
  }
}
