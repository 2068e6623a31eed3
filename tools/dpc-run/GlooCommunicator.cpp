//===- GlooCommunicator.cpp - One rank's Gloo communicator over TCP -------===//
//
// The only file of dpc-run built with exceptions (see CMakeLists.txt): each
// member catches what Gloo throws and turns it into an error message.
//
//===----------------------------------------------------------------------===//

#include "GlooCommunicator.h"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <exception>

using namespace mlir;
using namespace mlir::dpc;

GlooCommunicator::GlooCommunicator(std::shared_ptr<gloo::Context> context)
    : context(std::move(context)) {}

GlooCommunicator::~GlooCommunicator() = default;

std::unique_ptr<GlooCommunicator>
GlooCommunicator::connect(int rank, int size, const std::string &storeDir,
                          const std::string &hostname,
                          std::chrono::milliseconds timeout,
                          std::string &error) {
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
    return std::unique_ptr<GlooCommunicator>(
        new GlooCommunicator(std::move(context)));
  } catch (const std::exception &e) {
    error = e.what();
    return nullptr;
  }
}

int GlooCommunicator::getRank() const { return context->rank; }

int GlooCommunicator::getSize() const { return context->size; }

bool GlooCommunicator::barrier(std::string &error) {
  try {
    gloo::BarrierOptions options(context);
    gloo::barrier(options);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

bool GlooCommunicator::allReduceSum(llvm::MutableArrayRef<float> data,
                                    std::string &error) {
  try {
    gloo::AllreduceOptions options(context);
    options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    options.setOutput(data.data(), data.size());
    options.setReduceFunction(
        static_cast<void (*)(void *, const void *, const void *, size_t)>(
            &gloo::sum<float>));
    gloo::allreduce(options);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}
