import { kafkajsConsumer } from '../../src/index.js';
import { describeKafkaContracts } from './kafka-contracts.js';

describeKafkaContracts('kafkajs', kafkajsConsumer);
